#!/usr/bin/env bash
# Boot Debian's stock kernel under qemu (TCG) and run tests/vm/guest-tests.sh
# in it, chrooted into this machine's root filesystem (read-only over 9p).
#
#   tests/vm/run-vm.sh [options] BUILD_DIR
#     --kmod FILE     cryptoshim.ko to test (default: kmod-shim/cryptoshim.ko
#                     if it exists; the module tests are skipped without one)
#     --kver VERSION  kernel to boot (default: newest /lib/modules/* that has
#                     a /boot/vmlinuz-* and headers (build/) beside it)
#     --print-kver    print that default and exit
#     --timeout SEC   hard limit for the whole VM run (default 600)
#     --keep          keep the work directory (console log, results)
#     --only REGEX    run only the guest tests whose names match (bash =~;
#                     kmod-afalg-pcrypt, -pinned, -unload need kmod-load)
#     --verbose       show every test's output, not only failing ones
#     --script FILE   run FILE in the guest instead of guest-tests.sh (it
#                     gets the same environment; for debugging)
#   Environment: VM_MEM (MiB, default 2048), VM_CPUS (default 4), VM_APPEND
#   (more kernel command line).
#
# Prints the guest's VMTEST lines and a summary; exits 0 only if every test
# passed and the guest finished. The initramfs is cached in BUILD_DIR/vm/,
# keyed by the hash of everything that goes into it.
set -euo pipefail

usage() {
	sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

pick_kver() {
	local d v best=
	for d in /lib/modules/*/modules.dep; do
		[ -e "$d" ] || continue
		v=$(basename "$(dirname "$d")")
		[ -r "/boot/vmlinuz-$v" ] && [ -d "/lib/modules/$v/build" ] && best=$(printf '%s\n%s\n' "$best" "$v" | sort -V | tail -1)
	done
	echo "$best"
}

REPO=$(cd "$(dirname "$0")/../.." && pwd)
KMOD= KVER= TIMEOUT=600 KEEP=0 SCRIPT= PRINT_KVER=0 ONLY= VERBOSE=0
while [ $# -gt 0 ]; do
	case $1 in
	--kmod) KMOD=$2; shift 2 ;;
	--kver) KVER=$2; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--print-kver) PRINT_KVER=1; shift ;;
	--only) ONLY=$2; shift 2 ;;
	--verbose) VERBOSE=1; shift ;;
	--script) SCRIPT=$(readlink -f "$2"); shift 2 ;;
	-h | --help) usage ;;
	-*) echo "run-vm: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
if [ "$PRINT_KVER" = 1 ]; then
	pick_kver
	exit 0
fi
[ $# -eq 1 ] || usage
BUILD=$(cd "$1" && pwd) || { echo "run-vm: no build directory $1" >&2; exit 2; }
[ -n "$KMOD" ] || { [ -f "$REPO/kmod-shim/cryptoshim.ko" ] && KMOD=$REPO/kmod-shim/cryptoshim.ko; } || true
MEM=${VM_MEM:-2048}
CPUS=${VM_CPUS:-4}

[ -n "$KVER" ] || KVER=$(pick_kver)
[ -n "$KVER" ] || { echo "run-vm: no kernel with modules found (apt-get install linux-image-amd64)" >&2; exit 2; }
KERNEL=/boot/vmlinuz-$KVER
for tool in qemu-system-x86_64 modprobe cpio; do
	command -v $tool >/dev/null || { echo "run-vm: $tool missing (scripts/deps.sh)" >&2; exit 2; }
done
BUSYBOX=/bin/busybox
# the initramfs has no libc: busybox must be the static build
if [ ! -x "$BUSYBOX" ] || ldd "$BUSYBOX" >/dev/null 2>&1; then
	echo "run-vm: no static $BUSYBOX (apt-get install busybox-static)" >&2
	exit 2
fi

# --- initramfs: busybox, init.sh, and the modules that reach the 9p root.
# Everything else (crypto modules, cryptoshim) is loaded inside the chroot
# with the host's own modprobe and /lib/modules, which resolve dependencies.
INITRD_MODS=(virtio_pci 9pnet_virtio 9p)
initramfs() {
	local mods=() m f seen=" "
	for m in "${INITRD_MODS[@]}"; do
		while read -r _ f _; do
			case $seen in *" $f "*) continue ;; esac
			seen="$seen$f "
			mods+=("$f")
		done < <(modprobe --show-depends -S "$KVER" "$m" | grep '^insmod ')
	done
	local key
	key=$( (echo "$KVER"; sha256sum "$BUSYBOX" "$REPO/tests/vm/init.sh" "${mods[@]}") |
		sha256sum | cut -c1-16)
	local out=$BUILD/vm/initramfs-$key.cpio
	if [ ! -s "$out" ]; then
		local root
		root=$(mktemp -d)
		mkdir -p "$root"/{bin,dev,proc,sys,run,modules}
		cp "$BUSYBOX" "$root/bin/busybox"
		cp "$REPO/tests/vm/init.sh" "$root/init"
		chmod 755 "$root/init"
		for f in "${mods[@]}"; do
			case $f in
			*.ko) cp "$f" "$root/modules/" ;;
			*.ko.xz) xz -dc "$f" >"$root/modules/$(basename "${f%.xz}")" ;;
			*.ko.zst) zstd -qdc "$f" >"$root/modules/$(basename "${f%.zst}")" ;;
			*) echo "run-vm: cannot unpack $f" >&2; exit 2 ;;
			esac
			basename "${f%.ko*}.ko" >>"$root/modules/order"
		done
		mkdir -p "$BUILD/vm"
		(cd "$root" && find . | cpio -o -H newc --quiet) >"$out.$$"
		mv "$out.$$" "$out"
		rm -rf "$root"
		# older ones only (a concurrent run may be using its own)
		find "$BUILD/vm" -name 'initramfs-*.cpio' ! -name "${out##*/}" -delete
	fi
	echo "$out"
}
INITRD=$(initramfs)

# --- the writable share: env for init.sh, the module, results.
SHARE=$(mktemp -d /tmp/cryptod-vm.XXXXXX)
chmod 755 "$SHARE"
cleanup() { [ "$KEEP" = 1 ] && echo "run-vm: kept $SHARE" >&2 || rm -rf "$SHARE"; }
trap cleanup EXIT
# with ASan+UBSan: it runs in the guest against the host's libasan
${CC:-cc} -std=c11 -O1 -g -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	-o "$SHARE/afalg-check" "$REPO/tests/vm/afalg-check.c"
GUEST_SCRIPT=$REPO/tests/vm/guest-tests.sh
if [ -n "$SCRIPT" ]; then
	cp "$SCRIPT" "$SHARE/script.sh"
	GUEST_SCRIPT=/run/cryptod-vm/script.sh
fi
if [ -n "$KMOD" ]; then
	cp "$KMOD" "$SHARE/cryptoshim.ko"
	HAVE_KMOD=1
else
	HAVE_KMOD=0
fi
cat >"$SHARE/env" <<EOF
REPO='$REPO'
BUILD='$BUILD'
HAVE_KMOD=$HAVE_KMOD
SCRIPT='$GUEST_SCRIPT'
VMTEST_ONLY='${ONLY//\'/}'
VMTEST_VERBOSE=$VERBOSE
EOF
LOG=$SHARE/console.log

echo "run-vm: kernel $KVER, $CPUS vCPUs, ${MEM} MiB, timeout ${TIMEOUT} s, build $BUILD"
t0=$(date +%s)
set +e
timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 \
	-nodefaults -no-user-config -display none -no-reboot \
	-accel tcg,thread=multi -cpu max -smp "$CPUS" -m "$MEM" \
	-kernel "$KERNEL" -initrd "$INITRD" \
	-append "console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init mitigations=off ${VM_APPEND:-}" \
	-serial "file:$LOG" -monitor none -net none \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$SHARE,mount_tag=vmshare,security_model=none" \
	</dev/null >"$SHARE/qemu.out" 2>&1
qrc=$?
set -e
t1=$(date +%s)

touch "$SHARE/guest.out"
if [ "$VERBOSE" = 1 ]; then
	cat "$SHARE/guest.out"
else
	grep -a '^VMTEST ' "$SHARE/guest.out" || true
fi
pass=$(grep -ac '^VMTEST PASS ' "$SHARE/guest.out" || true)
fail=$(grep -ac '^VMTEST FAIL ' "$SHARE/guest.out" || true)
skip=$(grep -ac '^VMTEST SKIP ' "$SHARE/guest.out" || true)
boot=$(awk '/^VMINIT up / { print $3; exit }' "$LOG" 2>/dev/null || true)
problem=
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	problem="timed out after $TIMEOUT s"
elif [ ! -s "$SHARE/guest.rc" ]; then
	problem="the guest did not finish (qemu exit $qrc)"
elif [ "$(cat "$SHARE/guest.rc")" != 0 ] && [ "$fail" = 0 ]; then
	problem="guest-tests.sh exited $(cat "$SHARE/guest.rc") without a FAIL line"
elif [ "$pass" = 0 ] && [ "$fail" = 0 ]; then
	problem="no test ran"
fi
echo "run-vm: $pass passed, $fail failed, $skip skipped; guest booted in ${boot:-?} s, VM ran $((t1 - t0)) s"
if [ -n "$problem" ] || [ "$fail" != 0 ]; then
	[ -n "$problem" ] && echo "run-vm: FAILED: $problem" >&2
	echo "--- qemu:" >&2
	tail -5 "$SHARE/qemu.out" >&2
	echo "--- console (last 40 lines of $LOG):" >&2
	tail -40 "$LOG" >&2
	KEEP=1
	exit 1
fi
