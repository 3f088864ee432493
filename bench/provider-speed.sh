#!/usr/bin/env bash
# openssl speed through cryptod's provider against OpenSSL's default
# provider, in the same run, interleaved: AES-128-GCM, AES-128-CBC and
# ChaCha20-Poly1305, synchronous and with -async_jobs 8 and 32. Wall-clock
# time (-elapsed): openssl speed's default is the process's user CPU time,
# which leaves out the daemon's work and would flatter the provider.
# Prints the machine first.
#
#   bench/provider-speed.sh [BUILD_DIR]      (default: build)
#
# Environment: BYTES (buffer sizes, default "16384 1024"), SECONDS_EACH
# (default 2), ROUNDS (default 3; the median is printed), WORKERS (the
# daemon's, default 1: the crypto on the other core), ALGS, JOBS (default
# "0 8 32"), PIN (default 1: openssl on CPU 0, the daemon on CPU 1, as a
# deployment would keep them; 0 leaves both to the scheduler).
#
# Every cryptod figure is checked against the daemon's own byte counter:
# a run in which the daemon did not see at least 90% of the bytes openssl
# reports (a configuration that did not offload, a fallback) is printed
# as "-" and named, never as a figure.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BYTES=${BYTES:-16384 1024}
SECS=${SECONDS_EACH:-2}
ROUNDS=${ROUNDS:-3}
PIN=${PIN:-1}
WORKERS=${WORKERS:-1}
ALGS=${ALGS:-aes-128-gcm aes-128-cbc chacha20-poly1305}
JOBS=${JOBS:-0 8 32}
NAME=provider-speed
. bench/provider_lib.sh # the checkout, after the cd above
echo "openssl: $(openssl version)  daemon workers: $("$CTL" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["workers"])')  pinned: $(pinned)"

# One openssl speed run; prints MB/s (1e6 bytes per second), or "-" when
# a cryptod run's bytes did not reach the daemon.
speed() { # provider(default|cryptod) alg jobs bytes
	local pargs=() jargs=() b0 b1 mbs
	[ "$1" = cryptod ] && pargs=(-provider-path "$BUILD/provider" -provider cryptod
		-provider default -propquery provider=cryptod)
	[ "$3" != 0 ] && jargs=(-async_jobs "$3")
	[ "$1" = cryptod ] && b0=$(dbytes)
	mbs=$("${pin_c[@]}" openssl speed -elapsed -seconds "$SECS" -bytes "$4" \
		"${pargs[@]}" "${jargs[@]}" -evp "$2" 2>/dev/null |
		awk 'END { v = $NF; sub(/k$/, "", v); printf "%.0f", v / 1000 }')
	if [ "$1" = cryptod ]; then
		b1=$(dbytes)
		if ! awk -v d=$((b1 - b0)) -v m="$mbs" -v s="$SECS" \
			'BEGIN { exit !(m > 0 && d >= 0.9 * m * 1e6 * s) }'; then
			echo "  $2 $4 bytes jobs $3: the daemon saw $((b1 - b0)) bytes of ${mbs} MB/s x ${SECS} s: not offloaded" >&2
			mbs=-
		fi
	fi
	echo "$mbs"
}
median() { tr ' ' '\n' | grep -v '^-$' | sort -n |
	awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] : "-" }'; }

echo
echo "== openssl speed -evp ALG -elapsed -seconds $SECS: MB/s, default provider vs cryptod's (median of $ROUNDS) =="
echo "(line: what a cache line took from CPU 0 to CPU 1 and back, in ns, just"
echo " before the row: the vCPUs' placement, which can change within a run)"
printf '%-18s %6s %6s %10s %10s %8s %6s\n' alg bytes jobs default cryptod ratio line
for b in $BYTES; do
	for a in $ALGS; do
		for j in $JOBS; do
			d=() c=()
			line=$("$CTL" bench stream --total 16 --rounds 1 2>/dev/null |
				sed -n 's/.*and back: \([0-9]*\) ns.*/\1/p')
			for r in $(seq "$ROUNDS"); do
				if [ $((r % 2)) = 1 ]; then
					d+=("$(speed default "$a" "$j" "$b")")
					c+=("$(speed cryptod "$a" "$j" "$b")")
				else
					c+=("$(speed cryptod "$a" "$j" "$b")")
					d+=("$(speed default "$a" "$j" "$b")")
				fi
			done
			dm=$(echo "${d[*]}" | median)
			cm=$(echo "${c[*]}" | median)
			printf '%-18s %6s %6s %10s %10s %8s %6s\n' "$a" "$b" \
				"$([ "$j" = 0 ] && echo sync || echo "$j")" "$dm" "$cm" \
				"$(awk -v c="$cm" -v d="$dm" 'BEGIN { if (d > 0 && c != "-") printf "%.2f", c / d; else print "-" }')" \
				"${line:--}"
		done
	done
done
