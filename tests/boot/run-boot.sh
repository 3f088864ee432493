#!/usr/bin/env bash
# Boot the Debian packages under systemd: a minimal bookworm image built
# with mmdebstrap from this machine's apt mirror, the .debs installed in
# it with apt, booted under qemu (KVM if /dev/kvm is usable, else TCG)
# with this machine's Debian kernel and systemd as PID 1; the checks of
# tests/boot/guest.sh run there and report over the serial console.
#
#   tests/boot/run-boot.sh [options] DEB_DIR
#     --timeout SEC   hard limit for the VM (default 240)
#     --keep          keep the work directory (image, console log)
#     --verbose       print the whole console log
#   Environment: BOOT_KVM=1 to use KVM (default TCG); BOOT_CACHE (default /var/cache/cryptod-boot): the base
#   image (keyed by its package list, mirror and suite) and the initramfs
#   are kept there between runs; BOOT_NO_CACHE=1 builds both afresh.
#
# Prints one line per check and a summary; exits 0 only if every check
# passed and the guest finished, 77 (skip) only when qemu is not installed
# or the mirror cannot be reached, 1 otherwise.
set -euo pipefail

usage() {
	sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
TIMEOUT=240 KEEP=0 VERBOSE=0
while [ $# -gt 0 ]; do
	case $1 in
	--timeout) TIMEOUT=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--verbose) VERBOSE=1; shift ;;
	-h | --help) usage ;;
	-*) echo "run-boot: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || usage
DEBS=$(cd "$1" && pwd) || { echo "run-boot: no directory $1" >&2; exit 1; }
SUITE=bookworm
CACHE=${BOOT_CACHE:-/var/cache/cryptod-boot}
t_start=$(date +%s)
say() { echo "run-boot: $*"; }
die() { echo "run-boot: $*" >&2; exit 1; }

command -v qemu-system-x86_64 >/dev/null || { say "skipped: qemu-system-x86_64 not installed"; exit 77; }
for tool in mmdebstrap mke2fs modprobe depmod cpio dpkg-deb; do
	command -v $tool >/dev/null || die "$tool missing (scripts/deps.sh)"
done
# Not root (a CI that runs the suite through sudo for apt only): skip, as
# the stage's other missing prerequisites do.
[ "$(id -u)" = 0 ] || { say "skipped: needs root (the image's files belong to its users; dpkg installs into it)"; exit 77; }
BUSYBOX=/bin/busybox
{ [ -x $BUSYBOX ] && ! ldd $BUSYBOX >/dev/null 2>&1; } || die "no static $BUSYBOX (busybox-static)"

# The newest kernel with its modules beside it.
KVER=
for d in /lib/modules/*/modules.dep; do
	[ -e "$d" ] || continue
	v=$(basename "$(dirname "$d")")
	[ -r "/boot/vmlinuz-$v" ] && KVER=$(printf '%s\n%s\n' "$KVER" "$v" | sed '/^$/d' | sort -V | tail -1)
done
[ -n "$KVER" ] || die "no /boot/vmlinuz-* with /lib/modules (linux-image-amd64)"

# The packages: all but the DKMS one (it would need a compiler and headers
# in the image; tests/vm builds and loads the module).
mapfile -t PKGS < <(ls "$DEBS"/cryptod_*.deb "$DEBS"/cryptoctl_*.deb "$DEBS"/libcryptoclient0_*.deb \
	"$DEBS"/cryptod-openssl-provider_*.deb 2>/dev/null)
[ ${#PKGS[@]} = 4 ] || die "expected cryptod, cryptoctl, libcryptoclient0 and cryptod-openssl-provider .debs in $DEBS (tests/deb/test_deb.sh makes them)"

# The mirror apt uses here: the first bookworm main source.
MIRROR=$(
	{
		cat /etc/apt/sources.list 2>/dev/null | awk -v s=$SUITE '$1 == "deb" && $3 == s { print $2 }' || true
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -e "$f" ] || continue
			awk -v s=$SUITE 'BEGIN { RS = ""; FS = "\n" }
				{ u = ""; ok = 0
				  for (i = 1; i <= NF; i++) {
					if ($i ~ /^URIs:/) { u = $i; sub(/^URIs: */, "", u); sub(/ .*/, "", u) }
					if ($i ~ /^Suites:/ && (" " $i " ") ~ (" " s " ")) ok = 1
				  }
				  if (ok && u != "") print u }' "$f"
		done
		cat /etc/apt/sources.list.d/*.list 2>/dev/null | awk -v s=$SUITE '$1 == "deb" && $3 == s { print $2 }' || true
	} | head -1
)
[ -n "$MIRROR" ] || { say "skipped: no $SUITE source in /etc/apt/sources.list*"; exit 77; }
# apt's own client, so that apt's proxy settings count as they do for
# mmdebstrap
rel=$(mktemp -u /tmp/cryptod-boot-release.XXXXXX)
if ! timeout 30 /usr/lib/apt/apt-helper download-file "$MIRROR/dists/$SUITE/Release" "$rel" >/dev/null 2>&1; then
	rm -f "$rel"
	say "skipped: the mirror $MIRROR cannot be reached"
	exit 77
fi
rm -f "$rel"

# Base image packages: systemd as init, what the checks use, and the
# packages' own dependencies (first alternative, without versions).
BASE=(systemd systemd-sysv dbus kmod procps passwd openssl)
deps=$(for p in "${PKGS[@]}"; do dpkg-deb -f "$p" Depends; done | tr ',' '\n' |
	sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' | sed '/^$/d' |
	grep -vxE 'cryptod|cryptoctl|libcryptoclient0|cryptod-openssl-provider' | sort -u)
mapfile -t ALL < <(printf '%s\n' "${BASE[@]}" $deps | sort -u)
INCLUDE=$(IFS=,; echo "${ALL[*]}")
MMOPTS=(--variant=apt --mode=root --format=tar
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*'
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*')
key=$( (echo "$SUITE $MIRROR $INCLUDE"; printf '%s\n' "${MMOPTS[@]}") | sha256sum | cut -c1-16)
mkdir -p "$CACHE"
base=$CACHE/base-$key.tar
[ "${BOOT_NO_CACHE:-0}" = 1 ] && rm -f "$base"
if [ -s "$base" ]; then
	say "base image: cached $base"
else
	t=$(date +%s)
	say "base image: mmdebstrap $SUITE from $MIRROR (${#ALL[@]} packages asked for)"
	mmdebstrap "${MMOPTS[@]}" --include="$INCLUDE" $SUITE "$base.$$" "$MIRROR" >"$CACHE/mmdebstrap.log" 2>&1 ||
		{ tail -20 "$CACHE/mmdebstrap.log" >&2; rm -f "$base.$$"; die "mmdebstrap failed (log: $CACHE/mmdebstrap.log)"; }
	mv "$base.$$" "$base"
	find "$CACHE" -name 'base-*.tar' ! -name "${base##*/}" -delete
	say "base image: built in $(($(date +%s) - t)) s"
fi

WORK=$(mktemp -d /var/tmp/cryptod-boot.XXXXXX)
cleanup() { [ "$KEEP" = 1 ] && say "kept $WORK" >&2 || rm -rf "$WORK"; }
trap cleanup EXIT
ROOT=$WORK/root
mkdir "$ROOT"
tar -C "$ROOT" --numeric-owner -xf "$base"

# The packages, installed as the README says (apt install FILE.deb), in the
# image (its dependencies are in the base already, so apt needs no
# network). No systemd runs there: the postinst enables, starts nothing.
# The base left out docs, man pages and locales to stay small; the
# packages' own files (the example configurations) must all be there.
rm -f "$ROOT/etc/dpkg/dpkg.cfg.d/99mmdebstrap"
mkdir -p "$ROOT/tmp/debs"
cp "${PKGS[@]}" "$ROOT/tmp/debs/"
chroot "$ROOT" sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y /tmp/debs/*.deb' \
	>"$WORK/apt.log" 2>&1 ||
	{ cat "$WORK/apt.log" >&2; die "apt install ./*.deb failed in the image"; }
rm -rf "$ROOT/tmp/debs"
grep -E "^(W|E):" "$WORK/apt.log" | grep -v -e "unsandboxed as root" -e "Can not write log" | sed 's/^/run-boot: apt: /' || true

# The guest kernel's crypto modules (AF_ALG, pcrypt, the ciphers) for the
# kernel engine; the kernel loads them on demand with the image's modprobe.
M=/lib/modules/$KVER
mkdir -p "$ROOT$M"
cp "$M"/modules.order "$M"/modules.builtin* "$ROOT$M/"
for d in kernel/crypto kernel/arch/x86/crypto kernel/lib; do
	[ -d "$M/$d" ] && mkdir -p "$ROOT$M/$(dirname $d)" && cp -a "$M/$d" "$ROOT$M/$d"
done
depmod -b "$ROOT" "$KVER"

# The checks and the unit that runs them once the system is up, writing
# to the serial console, then powers off.
install -m 755 "$REPO/tests/boot/guest.sh" "$ROOT/usr/local/sbin/cryptod-boottest"
cat >"$ROOT/etc/systemd/system/cryptod-boottest.service" <<'EOF'
[Unit]
Description=cryptod boot test (tests/boot/guest.sh)
After=basic.target cryptod.socket
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=simple
ExecStart=/usr/local/sbin/cryptod-boottest
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0

[Install]
WantedBy=multi-user.target
EOF
mkdir -p "$ROOT/etc/systemd/system/multi-user.target.wants"
ln -s /etc/systemd/system/cryptod-boottest.service \
	"$ROOT/etc/systemd/system/multi-user.target.wants/cryptod-boottest.service"
# nothing else on the console; no waiting for a network
for u in serial-getty@ttyS0.service getty.target systemd-networkd-wait-online.service; do
	ln -sf /dev/null "$ROOT/etc/systemd/system/$u"
done
echo cryptod-boot >"$ROOT/etc/hostname"
echo "/dev/vda / ext4 rw,relatime 0 1" >"$ROOT/etc/fstab"

IMG=$WORK/disk.img
size=$(( $(du -sm "$ROOT" | cut -f1) + 256 ))
truncate -s "${size}M" "$IMG"
mke2fs -q -t ext4 -L cryptod-boot -d "$ROOT" "$IMG" || die "mke2fs -d failed"

# initramfs: busybox, the modules to reach an ext4 root on virtio-blk.
initramfs() {
	local mods=() m f seen=" "
	for m in virtio_pci virtio_blk ext4; do
		while read -r _ f _; do
			case $seen in *" $f "*) continue ;; esac
			seen="$seen$f "
			mods+=("$f")
		done < <(modprobe --show-depends -S "$KVER" "$m" | grep '^insmod ')
	done
	local k out
	k=$( (echo "$KVER"; sha256sum "$BUSYBOX" "$REPO/tests/boot/init.sh" "${mods[@]}") | sha256sum | cut -c1-16)
	out=$CACHE/initramfs-$k.cpio
	if [ ! -s "$out" ] || [ "${BOOT_NO_CACHE:-0}" = 1 ]; then
		local r
		r=$(mktemp -d)
		mkdir -p "$r"/{bin,dev,proc,sys,newroot,modules}
		cp "$BUSYBOX" "$r/bin/busybox"
		install -m 755 "$REPO/tests/boot/init.sh" "$r/init"
		for f in "${mods[@]}"; do
			case $f in
			*.ko) cp "$f" "$r/modules/" ;;
			*.ko.xz) xz -dc "$f" >"$r/modules/$(basename "${f%.xz}")" ;;
			*.ko.zst) zstd -qdc "$f" >"$r/modules/$(basename "${f%.zst}")" ;;
			*) die "cannot unpack $f" ;;
			esac
			basename "${f%.ko*}.ko" >>"$r/modules/order"
		done
		(cd "$r" && find . | cpio -o -H newc --quiet) >"$out.$$"
		mv "$out.$$" "$out"
		rm -rf "$r"
		find "$CACHE" -name 'initramfs-*.cpio' ! -name "${out##*/}" -delete
	fi
	echo "$out"
}
INITRD=$(initramfs)

# TCG by default: on the nested-virtualisation hosts this runs on, KVM
# either aborts (-cpu host: "failed to set MSR 0x10a") or never reaches
# the console; BOOT_KVM=1 asks for it where it works.
ACCEL=(-accel tcg,thread=multi -cpu max)
accel=TCG
if [ "${BOOT_KVM:-0}" = 1 ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
	ACCEL=(-accel kvm -cpu host)
	accel=KVM
fi
LOG=$WORK/console.log
t_prep=$(date +%s)
say "kernel $KVER, $accel, image $size MiB, prepared in $((t_prep - t_start)) s"
set +e
timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 \
	-nodefaults -no-user-config -display none -no-reboot \
	"${ACCEL[@]}" -smp 2 -m 1024 \
	-kernel "/boot/vmlinuz-$KVER" -initrd "$INITRD" \
	-append "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=3 systemd.show_status=0 mitigations=off" \
	-drive "file=$IMG,format=raw,if=virtio,cache=unsafe" \
	-serial "file:$LOG" -monitor none -nic none \
	</dev/null >"$WORK/qemu.out" 2>&1
qrc=$?
set -e
t_end=$(date +%s)

touch "$LOG"
if [ "$VERBOSE" = 1 ]; then
	tr -d '\r' <"$LOG"
else
	tr -d '\r' <"$LOG" | grep -a '^BOOTTEST \(PASS\|FAIL\|INFO\)' || true
fi
pass=$(grep -ac '^BOOTTEST PASS ' "$LOG" || true)
fail=$(grep -ac '^BOOTTEST FAIL ' "$LOG" || true)
problem=
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	problem="timed out after $TIMEOUT s"
elif ! grep -aq '^BOOTTEST DONE' "$LOG"; then
	problem="the guest did not finish the checks (qemu exit $qrc)"
fi
say "$pass passed, $fail failed; VM ran $((t_end - t_prep)) s, stage $((t_end - t_start)) s"
if [ -n "$problem" ] || [ "$fail" != 0 ]; then
	[ -n "$problem" ] && say "FAILED: $problem" >&2
	tail -5 "$WORK/qemu.out" >&2
	echo "--- console (last 40 lines of $LOG):" >&2
	tr -d '\r' <"$LOG" | tail -40 >&2
	KEEP=1
	exit 1
fi
