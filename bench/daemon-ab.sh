#!/usr/bin/env bash
# Two daemon builds side by side: `cryptoctl bench` against daemon A, then
# against daemon B, round after round (A B A B ...), and the medians of
# each and of the per-round ratios B/A of the throughput through the
# daemon. For a change to the daemon's data path: "does it cost
# throughput?" answered on this machine, in one run, interleaved.
#
#   bench/daemon-ab.sh [-r ROUNDS] [-a ALGS] [-s SIZES] A_BIN B_BIN
#
# A_BIN, B_BIN: cryptod binaries (e.g. a build of main and of a branch).
# The cryptoctl that drives both is $CRYPTOCTL (default build/cli/cryptoctl).
# Machine noise: each round is one bench run of 3 rounds x 200 ms per
# size; read the ratio's median, and its spread in the "min..max" column.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=5
ALGS=aes-128-gcm,aes-128-cbc
SIZES=64,256,1024,4096,16384
while getopts r:a:s: o; do
	case $o in
	r) ROUNDS=$OPTARG ;;
	a) ALGS=$OPTARG ;;
	s) SIZES=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,14p' "$0"; exit 2; }
A=$1 B=$2
CTL=${CRYPTOCTL:-build/cli/cryptoctl}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The machine, once (the bench prints it on stderr).
"$CTL" bench --spawn-daemon "$A" --alg aes-128-gcm --sizes 64 --smoke \
	--csv 2>&1 >/dev/null | grep -E "^Machine" || true
for r in $(seq 1 "$ROUNDS"); do
	for side in A B; do
		bin=$A
		[ $side = B ] && bin=$B
		"$CTL" bench --spawn-daemon "$bin" --alg "$ALGS" --sizes "$SIZES" \
			--rounds 3 --time-ms 200 --csv 2>/dev/null |
			awk -F, -v s=$side -v r="$r" '$3 == "cryptod" {
				print s, r, $1, $2, $4, $6 }' >>"$out/all"
	done
	echo "round $r of $ROUNDS done" >&2
done

# alg dir size: median Gbps of A and B, median of the per-round ratios.
printf "%-14s %-4s %7s %10s %10s %8s %13s\n" alg dir size "A Gbps" "B Gbps" \
	B/A "B/A min..max"
awk '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ k = $3 " " $4 " " $5; g[$1, k, $2] = $6; keys[k] = 1; rounds[$2] = 1 }
END {
	for (k in keys) {
		na = nb = nr = 0
		lo = 1e9; hi = 0
		for (r in rounds) {
			if ((("A", k, r) in g) && (("B", k, r) in g) &&
			    g["A", k, r] > 0) {
				a[++na] = g["A", k, r]; b[++nb] = g["B", k, r]
				x = g["B", k, r] / g["A", k, r]
				q[++nr] = x
				if (x < lo) lo = x
				if (x > hi) hi = x
			}
		}
		if (!nr) continue
		split(k, f, " ")
		printf "%-14s %-4s %7d %10.2f %10.2f %8.2f %6.2f..%-6.2f\n",
		       f[1], f[2], f[3], median(a, na), median(b, nb),
		       median(q, nr), lo, hi
	}
}' "$out/all" | sort -k1,1 -k2,2 -k3,3n
