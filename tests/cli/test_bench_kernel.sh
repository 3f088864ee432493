#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl bench's cryptod-kernel path: where the daemon's kernel (AF_ALG)
# engine is available (the VM suite, tests/vm/kernel-tests.list), the path
# is verified and measured beside the others, and --dmcrypt measures it
# too. Exit 77 where the engine is unavailable (this host: no AF_ALG).
#
#   test_bench_kernel.sh CRYPTOD CRYPTOCTL
set -u
DAEMON=$1
CTL=$2
command -v python3 >/dev/null || { echo "skipped: python3 is needed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptoctl-kbench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

"$CTL" bench --spawn-daemon "$DAEMON" --alg aes-128-cbc,aes-256-xts,aes-128-gcm \
	--sizes 64,4096 --rounds 1 --time-ms 30 --json >"$tmp/out" 2>"$tmp/err"
rc=$?
if grep -q "^cryptoctl: bench: no cryptod-kernel path\|no cryptod-kernel path: " "$tmp/err"; then
	echo "skipped: $(grep -m1 'no cryptod-kernel path' "$tmp/err")"
	exit 77
fi
if [ $rc != 0 ]; then
	echo "FAIL: bench exited $rc"
	cat "$tmp/err"
	exit 1
fi
python3 - "$tmp/out" <<'PY' || { cat "$tmp/err"; exit 1; }
import json, sys
j = json.load(open(sys.argv[1]))
k = [r for r in j["results"] if r["path"] == "cryptod-kernel"]
algs = {r["alg"] for r in k}
assert algs == {"aes-128-cbc", "aes-256-xts", "aes-128-gcm"}, algs
assert sorted(r["size"] for r in k) == [64, 64, 64, 4096, 4096, 4096], k
assert not any("dropped" in p["desc"] for p in j["paths"]), j["paths"]
print("ok: cryptod-kernel verified and measured for", sorted(algs))
PY
"$CTL" bench --spawn-daemon "$DAEMON" --dmcrypt --time-ms 30 >"$tmp/out" 2>"$tmp/err" || {
	echo "FAIL: bench --dmcrypt"
	cat "$tmp/err"
	exit 1
}
# 1 MiB is more than AF_ALG takes at once: a row, or the reason there is none.
for a in aes-256-ecb aes-256-cbc aes-256-xts; do
	grep -Eq "^$a +cryptod-kernel |no cryptod-kernel path for $a: the kernel engine takes at most [0-9]+ B per op" "$tmp/out" || {
		echo "FAIL: neither a cryptod-kernel row nor its reason for $a"
		cat "$tmp/out"
		exit 1
	}
done
grep -q "dropped" "$tmp/out" && {
	echo "FAIL: a path did not verify"
	cat "$tmp/out" "$tmp/err"
	exit 1
}
grep -q "aes-lrw: offered by engine kernel" "$tmp/out" || {
	echo "FAIL: the LRW line"
	cat "$tmp/out"
	exit 1
}
echo "ok: --dmcrypt accounts for the kernel path"
