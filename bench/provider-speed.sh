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
# (default 2), ROUNDS (default 1; the median is printed), WORKERS (the
# daemon's, default its own default), ALGS, JOBS (default "0 8 32").
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BYTES=${BYTES:-16384 1024}
SECS=${SECONDS_EACH:-2}
ROUNDS=${ROUNDS:-1}
ALGS=${ALGS:-aes-128-gcm aes-128-cbc chacha20-poly1305}
JOBS=${JOBS:-0 8 32}
CTL=$BUILD/cli/cryptoctl
[ -x "$CTL" ] && [ -x "$BUILD/daemon/cryptod" ] &&
	[ -e "$BUILD/provider/cryptod.so" ] || {
	echo "provider-speed: build first ($BUILD/provider/cryptod.so missing)" >&2
	exit 2
}
dir=$(mktemp -d)
trap 'kill "$dpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
wargs=()
[ -n "${WORKERS:-}" ] && wargs=(--workers "$WORKERS")
"$BUILD/daemon/cryptod" --no-config --socket "$dir/s.sock" "${wargs[@]}" \
	--log-level warn 2>"$dir/daemon.log" &
dpid=$!
export CRYPTOD_SOCKET=$dir/s.sock
for _ in $(seq 100); do "$CTL" ping >/dev/null 2>&1 && break; sleep 0.05; done
"$CTL" bench stream --total 16 --rounds 1 | sed -n 1,2p
echo "openssl: $(openssl version)  daemon workers: $("$CTL" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["workers"])')"

# One openssl speed run; prints MB/s (1e6 bytes per second).
speed() { # provider(default|cryptod) alg jobs bytes
	local pargs=() jargs=()
	[ "$1" = cryptod ] && pargs=(-provider-path "$BUILD/provider" -provider cryptod
		-provider default -propquery provider=cryptod)
	[ "$3" != 0 ] && jargs=(-async_jobs "$3")
	openssl speed -elapsed -seconds "$SECS" -bytes "$4" "${pargs[@]}" "${jargs[@]}" \
		-evp "$2" 2>/dev/null | awk 'END { v = $NF; sub(/k$/, "", v); printf "%.0f", v / 1000 }'
}
median() { tr ' ' '\n' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo
echo "== openssl speed -evp ALG -elapsed -seconds $SECS: MB/s, default provider vs cryptod's (median of $ROUNDS) =="
printf '%-18s %6s %6s %10s %10s %8s\n' alg bytes jobs default cryptod ratio
for b in $BYTES; do
	for a in $ALGS; do
		for j in $JOBS; do
			d=() c=()
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
			printf '%-18s %6s %6s %10s %10s %8s\n' "$a" "$b" \
				"$([ "$j" = 0 ] && echo sync || echo "$j")" "$dm" "$cm" \
				"$(awk -v c="$cm" -v d="$dm" 'BEGIN { if (d > 0) printf "%.2f", c / d; else print "-" }')"
		done
	done
done
