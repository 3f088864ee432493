#!/bin/busybox sh
# /init of the test VM's initramfs (busybox only). run-vm.sh packs it.
#
# Loads the virtio + 9p modules, mounts the host's root read-only and the
# writable share, chroots into the host root and runs the guest test script
# there, then powers off. Every step that can fail says so on the console
# with a "VMINIT" prefix; the host decides pass/fail from the files the
# guest leaves in the share (guest.rc missing = the guest did not finish).
/bin/busybox --install -s /bin
export PATH=/bin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

die() {
	echo "VMINIT FATAL: $*"
	poweroff -f
}

while read -r m; do
	insmod "/modules/$m" || die "insmod $m failed"
done </modules/order

H=/host
S=/run/cryptod-vm
P9="trans=virtio,version=9p2000.L,msize=512000"
mkdir -p $H /ro /share
mount -t 9p -o "$P9,cache=none" vmshare /share || die "mount vmshare"
[ -r /share/env ] || die "no env in the share"
# REPO, BUILD, HAVE_KMOD, SCRIPT, VMTEST_ONLY, VMTEST_VERBOSE (written by
# run-vm.sh)
. /share/env
mount -t 9p -o "$P9,ro,cache=loose" hostroot $H || die "mount hostroot"
for d in proc sys dev tmp run; do
	[ -d $H/$d ] || die "host root has no /$d"
done
mount -t proc proc $H/proc
mount -t sysfs sysfs $H/sys
mount -t devtmpfs devtmpfs $H/dev
mkdir -p $H/dev/pts $H/dev/shm 2>/dev/null
# what udev would add: bash's <(...) needs /dev/fd
ln -sf /proc/self/fd $H/dev/fd
ln -sf /proc/self/fd/0 $H/dev/stdin
ln -sf /proc/self/fd/1 $H/dev/stdout
ln -sf /proc/self/fd/2 $H/dev/stderr
mount -t devpts devpts $H/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $H/dev/shm
# A second view of the host root (a bind mount without the submounts), not
# covered by the tmpfs mounts below: a checkout or build under /tmp stays
# visible in the chroot.
mount --bind $H /ro || die "bind the host root"
for d in tmp run var/tmp; do
	[ -d $H/$d ] || continue
	mode=1777
	[ $d = run ] && mode=0755
	mount -t tmpfs -o mode=$mode tmpfs $H/$d
	for p in "$REPO" "$BUILD"; do
		case $p in
		/$d/*)
			mkdir -p "$H$p"
			mount --bind "/ro$p" "$H$p" || die "bind $p"
			;;
		esac
	done
done
mkdir -p $H$S
mount --bind /share $H$S || die "bind the share"
# The kernel's request_module() runs its helper in this root, not the
# chroot's: point it at the host's modprobe, which knows the modules.
printf '#!/bin/sh\nexec chroot %s /sbin/modprobe "$@"\n' $H >/bin/modprobe-host
chmod 755 /bin/modprobe-host
echo /bin/modprobe-host >/proc/sys/kernel/modprobe

# Loopback for tests that talk TCP to themselves (test_stray_fds).
ifconfig lo 127.0.0.1 up || echo "VMINIT no loopback"
echo "VMINIT up $(cut -d' ' -f1 /proc/uptime) s, $(grep -c ^processor /proc/cpuinfo) cpus"
# A pipe would lose the exit status in ash, so the subshell records it.
(
	chroot $H /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		TMPDIR=/tmp REPO="$REPO" BUILD="$BUILD" VMSHARE="$S" \
		HAVE_KMOD="$HAVE_KMOD" VMTEST_ONLY="$VMTEST_ONLY" \
		VMTEST_VERBOSE="$VMTEST_VERBOSE" /bin/bash "$SCRIPT" </dev/null 2>&1
	echo $? >/share/guest.rc
) | tee /share/guest.out
echo "VMINIT done $(cut -d' ' -f1 /proc/uptime) s, rc $(cat /share/guest.rc)"
sync
umount $H$S
umount /share
poweroff -f
