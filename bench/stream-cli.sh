#!/usr/bin/env bash
# cryptoctl encrypt against openssl enc on one message from a pipe:
# AES-128-CTR (openssl enc's fastest streaming mode that both share, and
# byte-identical output, checked first), alternating round by round, with
# the wall time and peak RSS of each. Prints the machine first.
#
#   bench/stream-cli.sh [BUILD_DIR]      (default: build)
#
# Environment: MIB (message size, default 1024), ROUNDS (default 5),
# ALG (cryptoctl's algorithm, default aes-128-ctr; aes-128-gcm adds a
# tag, so its output is not compared with openssl's).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MIB=${MIB:-1024}
ROUNDS=${ROUNDS:-5}
ALG=${ALG:-aes-128-ctr}
CTL=$BUILD/cli/cryptoctl
[ -x "$CTL" ] && [ -x "$BUILD/daemon/cryptod" ] || {
	echo "stream-cli: build first ($CTL missing)" >&2
	exit 2
}
[ -x /usr/bin/time ] || { echo "stream-cli: needs GNU time (apt-get install time)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'kill "$dpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
"$BUILD/daemon/cryptod" --no-config --socket "$dir/s.sock" --workers 1 \
	--log-level warn 2>"$dir/daemon.log" &
dpid=$!
export CRYPTOD_SOCKET=$dir/s.sock
for _ in $(seq 100); do "$CTL" ping >/dev/null 2>&1 && break; sleep 0.05; done

# The machine line every benchmark prints (CPU model, flags, the code
# ipsec-mb picks), from a tiny run of the stream mode.
"$CTL" bench stream --total 16 --rounds 1 | sed -n 1,2p

key=000102030405060708090a0b0c0d0e0f
iv=f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff
# Same bytes out, on a small message (the counter wraps inside it).
head -c 3000017 /dev/urandom >"$dir/m"
"$CTL" encrypt -a aes-128-ctr -k $key -i $iv <"$dir/m" >"$dir/a"
openssl enc -aes-128-ctr -K $key -iv $iv <"$dir/m" >"$dir/b"
cmp -s "$dir/a" "$dir/b" || { echo "stream-cli: cryptoctl and openssl differ" >&2; exit 1; }
echo "verified: cryptoctl aes-128-ctr output equals openssl enc's"
echo
echo "== $MIB MiB from a pipe to /dev/null: cryptoctl encrypt -a $ALG vs openssl enc -aes-128-ctr =="
printf '%5s  %14s  %12s  %14s  %12s  %8s\n' round "cryptoctl s" "RSS KiB" "openssl s" "RSS KiB" ratio
run() { # label command...
	local t
	t=$( { /usr/bin/time -f '%e %M' bash -c "head -c ${MIB}M /dev/zero | $* >/dev/null"; } 2>&1 | tail -1)
	echo "$t"
}
c_all=() o_all=()
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		c=$(run "$CTL" encrypt -a "$ALG" -k $key -i $iv)
		o=$(run openssl enc -aes-128-ctr -K $key -iv $iv)
	else
		o=$(run openssl enc -aes-128-ctr -K $key -iv $iv)
		c=$(run "$CTL" encrypt -a "$ALG" -k $key -i $iv)
	fi
	set -- $c; cs=$1 cr=$2
	set -- $o; os=$1 orss=$2
	ratio=$(awk -v a="$cs" -v b="$os" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
	printf '%5s  %14s  %12s  %14s  %12s  %8s\n' "$r" "$cs" "$cr" "$os" "$orss" "$ratio"
	c_all+=("$cs") o_all+=("$os")
done
med() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cm=$(med "${c_all[@]}") om=$(med "${o_all[@]}")
printf '%5s  %14s  %12s  %14s  %12s  %8s\n' median "$cm" "" "$om" "" \
	"$(awk -v a="$cm" -v b="$om" 'BEGIN { printf "%.2f", b / a }')"
echo
echo "ratio = openssl time / cryptoctl time (1.00: as fast as openssl enc in-process)."
