#!/usr/bin/env bash
# The kernel (AF_ALG) engine's cost per op relative to the userspace engine,
# through the daemon, measured in one run inside the qemu VM (Debian's
# kernel has AF_ALG; this host's may not). Emulated CPUs make absolute
# speeds meaningless: only the ratio of the two paths, by buffer size,
# measured in the same VM minutes apart, says anything.
#
#   bench/kernel-vs-user.sh [BUILD_DIR]     (default: build)
#
# Needs what tests/vm/run-vm.sh needs (scripts/deps.sh installs it).
# Environment: ALGS (default aes-128-gcm,aes-256-cbc,aes-256-xts),
# SIZES (default 64,256,1024,4096,16384), TIME_MS (default 200), PSIZES
# and PTIME_MS (pcrypt part, default 1024,16384 and 1000). With kmod-shim/cryptoshim.ko built, it
# also compares kernel and kernel-pcrypt at 1 and 4 workers.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
[ -x "$BUILD/bench/cryptod-bench" ] || {
	echo "kernel-vs-user: build first ($BUILD/bench/cryptod-bench missing)" >&2
	exit 2
}
guest=$(mktemp)
trap 'rm -f "$guest"' EXIT
cat >"$guest" <<GUEST
#!/bin/bash
# runs inside the VM, chrooted into the host's root; \$BUILD is set
modprobe -a af_alg algif_aead algif_skcipher gcm ghash-generic aesni_intel \
	xts cbc ctr ecb 2>/dev/null
cd "\$REPO"
# one run: the daemon's userspace engine and its kernel engine alternate
\$BUILD/cli/cryptoctl bench --spawn-daemon \$BUILD/daemon/cryptod --workers 1 \
	--alg ${ALGS:-aes-128-gcm,aes-256-cbc,aes-256-xts} \
	--sizes ${SIZES:-64,256,1024,4096,16384} --rounds 3 \
	--time-ms ${TIME_MS:-200} --no-inproc --csv 2>/dev/null | sed 's/^/CSV,/'
# pcrypt: the same AEAD on kernel and kernel-pcrypt, 1 and 4 workers, 4
# client queues (cryptoshim.ko makes the instance; no privilege needed)
if [ -f "\$VMSHARE/cryptoshim.ko" ]; then
	insmod "\$VMSHARE/cryptoshim.ko" 'algs=gcm(aes)'
	for w in 1 4; do
		for eng in kernel kernel-pcrypt; do
			\$BUILD/cli/cryptoctl bench --spawn-daemon \$BUILD/daemon/cryptod \
				--workers \$w --engine \$eng --queues 4 --alg aes-128-gcm \
				--sizes ${PSIZES:-1024,16384} --rounds 3 --burst 4 \
				--depth 2 --time-ms ${PTIME_MS:-1000} --no-inproc \
				--no-kernel --csv \
				2>/dev/null | sed "s/^/PCRYPT,\$w,\$eng,/"
		done
	done
	rmmod cryptoshim
fi
echo "VMTEST PASS bench"
GUEST
out=${KVU_OUT:-$(mktemp)}
kmod=()
[ -f kmod-shim/cryptoshim.ko ] && kmod=(--kmod kmod-shim/cryptoshim.ko)
tests/vm/run-vm.sh "${kmod[@]}" --verbose --script "$guest" "$BUILD" >"$out" 2>&1 || {
	tail -30 "$out"
	exit 1
}
awk -F, '
$1 == "CSV" && $4 ~ /^cryptod/ && $5 ~ /^[0-9]+$/ {
	k = $2 SUBSEP $5; seen[k] = 1
	mbs[$4, k] = $9 # mean MB/s: us per op = bytes / (MB/s)
}
END {
	printf "%-12s %8s %14s %14s %12s\n", "Algorithm", "Size(B)",
		"User us/op", "Kernel us/op", "Kernel/User"
	for (k in seen) {
		split(k, p, SUBSEP)
		u = mbs["cryptod", k]; kk = mbs["cryptod-kernel", k]
		if (u <= 0 || kk <= 0) continue
		printf "%-12s %8d %14.2f %14.2f %12.1f\n", p[1], p[2],
			p[2] / u, p[2] / kk, u / kk
	}
}' "$out" | sort -k1,1 -k2,2n
if grep -q '^PCRYPT,' "$out"; then
	echo
	echo "pcrypt: aes-128-gcm encrypt, 4 client queues x 8 ops in flight, MB/s (mean of 3 rounds)"
	awk -F, '$1 == "PCRYPT" && $7 ~ /^[0-9]+$/ {
		printf "%-8s %-14s %8d %10.2f\n", $2 " wkr", $3, $7, $11
	}' "$out" | sort -k3,3n -k1,1n -k2,2
fi
grep -E "^run-vm:" "$out" | tail -1
