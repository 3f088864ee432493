#!/bin/bash
# The daemon with its default kernel.pcrypt = auto and no privilege to
# create anything finds cryptoshim.ko's instances through sysfs, binds its
# kernel-pcrypt sessions to them, and encrypts a NIST GCM vector through
# them; without the module it says how to get one. Run by the VM suite
# (tests/vm/kernel-tests.list) with $BUILD and $VMSHARE set.
set -u
KO=${VMSHARE:?}/cryptoshim.ko
[ -f "$KO" ] || { echo "no cryptoshim.ko (run-vm.sh --kmod)"; exit 77; }
fail() { echo "FAIL: $*"; [ -f /tmp/shim.log ] && sed 's/^/  log: /' /tmp/shim.log; exit 1; }
CTL=$BUILD/cli/cryptoctl
sock=/tmp/shim.sock

start() {
	rm -f "$sock"
	"$BUILD/daemon/cryptod" --no-config --socket "$sock" --workers 2 \
		--log-level info 2>/tmp/shim.log &
	pid=$!
	for _ in $(seq 150); do
		"$CTL" --socket "$sock" ping >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	fail "daemon did not start"
}
stop() { kill "$pid"; wait "$pid" || fail "daemon exit status $?"; }

rmmod cryptoshim 2>/dev/null
insmod "$KO" 'algs=gcm(aes),rfc4106(gcm(aes))' || fail "insmod"
drv=$(cat /sys/kernel/cryptoshim/instances/0/driver)
start
out=$("$CTL" --socket "$sock" engines --all)
grep -q "kernel-pcrypt: aes-gcm -> $drv .*cryptoshim.ko" /tmp/shim.log ||
	fail "the daemon did not take $drv from cryptoshim.ko"
grep -q "kernel-pcrypt: aes-gcm-rfc4106 -> .*cryptoshim.ko" /tmp/shim.log ||
	fail "rfc4106 not taken from cryptoshim.ko"
echo "$out" | awk '$1 == "aes-gcm" && $2 == "kernel-pcrypt" && $4 == "yes" { f = 1 } END { exit !f }' ||
	fail "aes-gcm on kernel-pcrypt not available: $(echo "$out" | grep 'on kernel-pcrypt')"
# NIST GCM test case 2: K = 0^128, IV = 0^96, P = 0^128
ct=$(head -c 16 /dev/zero | "$CTL" --socket "$sock" encrypt -a aes-gcm \
	--engine kernel-pcrypt -k 00000000000000000000000000000000 \
	-i 000000000000000000000000 | od -An -tx1 | tr -d ' \n')
[ "$ct" = 0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf ] ||
	fail "NIST GCM case 2 through $drv gave $ct"
echo "aes-gcm through $drv (cryptoshim.ko): NIST case 2 ok"
stop

# Without the module and in auto mode, an algorithm no one has made an
# instance of is unavailable, and the reason says what to do.
rmmod cryptoshim || fail "rmmod"
start
# --wide: the reason on one line (the default wraps it at 100 columns)
why=$("$CTL" --socket "$sock" engines --all --wide | grep '^aes-cbc-hmac-sha256 on kernel-pcrypt')
stop
case $why in
*"pcrypt(authenc(hmac(sha256),cbc(aes)))"*cryptoshim.ko*) echo "$why" ;;
*"unavailable"*) fail "unexpected reason: $why" ;;
*) echo "authenc(hmac(sha256)) pcrypt instance exists already (made earlier): $why" ;;
esac
exit 0
