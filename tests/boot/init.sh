#!/bin/busybox sh
# /init of the boot test's initramfs (busybox only; run-boot.sh packs it):
# load the modules that reach the root file system (virtio-blk, ext4),
# mount /dev/vda and hand over to the image's systemd as PID 1.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
die() {
	echo "BOOTINIT FATAL: $*"
	poweroff -f
}
while read -r m; do
	insmod "/modules/$m" || die "insmod $m failed"
done </modules/order
n=50
while [ ! -b /dev/vda ] && [ $n -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
mount -t ext4 -o rw /dev/vda /newroot || die "mount /dev/vda"
[ -L /newroot/sbin/init ] || [ -x /newroot/sbin/init ] || die "no /sbin/init in the image"
umount /proc /sys
mount --move /dev /newroot/dev 2>/dev/null || umount /dev
exec switch_root /newroot /sbin/init
