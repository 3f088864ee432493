#!/usr/bin/env bash
# openssl enc (one long message of 8 KiB updates, as the openssl command
# line reads its input) through cryptod's provider against OpenSSL's
# default provider, interleaved rounds in the same run: AES-128-CTR and
# ChaCha20 by default, encrypting a file to /dev/null. Prints the machine
# first, then the median MB/s of each and the ratio.
#
#   bench/provider-enc.sh [BUILD_DIR]      (default: build)
#
# Environment: MIB (the file's size, default 1024), ROUNDS (default 3),
# CIPHERS (default "aes-128-ctr chacha20"), WORKERS (the daemon's,
# default 1), PIN (default 1: openssl on CPU 0, the daemon on CPU 1).
# A cryptod run in which the daemon's byte counter did not grow by at
# least 90% of the file is printed as "-" (it did not offload).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MIB=${MIB:-1024}
ROUNDS=${ROUNDS:-3}
CIPHERS=${CIPHERS:-aes-128-ctr chacha20}
WORKERS=${WORKERS:-1}
PIN=${PIN:-1}
NAME=provider-enc
. bench/provider_lib.sh # the checkout, after the cd above
echo "openssl: $(openssl version)  file: $MIB MiB  daemon workers: $WORKERS  pinned: $(pinned)"
head -c $((MIB << 20)) /dev/urandom >"$dir/in"
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
IV=f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff
run() { # provider cipher -> MB/s or -
	local pargs=() b0 b1 t0 t1 k=$KEY
	[ "$2" = aes-128-ctr ] && k=${KEY:0:32}
	[ "$1" = cryptod ] && pargs=(-provider-path "$BUILD/provider"
		-provider cryptod -provider default -propquery provider=cryptod)
	b0=$(dbytes)
	t0=$(date +%s%N)
	"${pin_c[@]}" openssl enc "${pargs[@]}" -"$2" -K "$k" -iv "$IV" \
		-in "$dir/in" -out /dev/null
	t1=$(date +%s%N)
	b1=$(dbytes)
	if [ "$1" = cryptod ] && [ $((b1 - b0)) -lt $((MIB * 1048576 * 9 / 10)) ]; then
		echo -
		return
	fi
	echo $((MIB * 1048576 * 1000 / (t1 - t0)))
}
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR + 1) / 2)] : "-")}'; }
printf '%-14s %12s %12s %7s\n' cipher "default MB/s" "cryptod MB/s" ratio
for c in $CIPHERS; do
	d=() y=()
	for _ in $(seq "$ROUNDS"); do
		d+=("$(run default "$c")")
		y+=("$(run cryptod "$c")")
	done
	md=$(echo "${d[*]}" | median)
	my=$(echo "${y[*]}" | grep -q -- - && echo - || echo "${y[*]}" | median)
	r=$([ "$my" != - ] && python3 -c "print(f'{$my / $md:.2f}')" || echo -)
	printf '%-14s %12s %12s %7s\n' "$c" "$md" "$my" "$r"
done
