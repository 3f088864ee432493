#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/quickstart.sh, the README's first command, on the binaries of
# this build (QUICKSTART_PREBUILT: no install, no build) and a private
# socket: a short, clean result within 100 columns, the vector check
# "ok", where to go next, the daemon stopped after; and a failing step
# shows FAILED and its log's tail, exit 1.
#
#   test_quickstart.sh QUICKSTART_SH BUILD_DIR
set -u
QS=$1
BUILD=$2
pass=0
fail=0
check()
{
	local desc=$1
	shift
	if "$@"; then
		pass=$((pass + 1))
		echo "ok: $desc"
	else
		fail=$((fail + 1))
		echo "FAIL: $desc" >&2
	fi
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/quickstart-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out

# The build as the quick start names it, from the repository's root (where
# it runs): build/, not a long absolute path that a newcomer never sees
# and that would push its "Next" lines past 100 columns.
root=$(cd "$(dirname "$QS")/.." && pwd)
BUILD=$(realpath --relative-to="$root" "$BUILD")
CRYPTOD_SOCKET=$tmp/cryptod.sock QUICKSTART_PREBUILT=$BUILD \
	QUICKSTART_BENCH_MS=20 timeout 120 bash "$QS" >"$out" 2>&1
rc=$?
cat "$out"
check "exit 0" test "$rc" -eq 0
n=$(wc -l <"$out")
check "short: $n lines (at most 45)" test "$n" -le 45
check "every line within 100 columns" \
	awk 'length > 100 { print "too wide: " $0; bad = 1 } END { exit bad }' "$out"
check "no build output" sh -c "! grep -Eq '^\[ *[0-9]+%\]|Building C|Linking|cmake' '$out'"
check "no internal targets or warnings" sh -c "! grep -Eiq 'target|WARNING|disturbed|below' '$out'"
check "the daemon answered" grep -q "^  cryptod .* at $tmp/cryptod.sock: hello in " "$out"
check "the benchmark table: sizes and Gbps per path" \
	grep -Eq '^  SIZE\(B\) +cryptod +ipsec-mb .*cryptod/ipsec-mb$' "$out"
check "the table says what its numbers are" grep -q 'Throughput in Gbps' "$out"
check "three sizes measured" \
	sh -c "grep -Eq '^ +64 +[0-9.]+ ' '$out' && grep -Eq '^ +1024 +[0-9.]+ ' '$out' && grep -Eq '^ +16384 +[0-9.]+ ' '$out'"
check "the vector check: ok" grep -Eq '^  AES-128-GCM, NIST test case 2 .*: ok$' "$out"
check "where to go next" sh -c "grep -q '^Next:' '$out' && grep -q 'stats --watch' '$out' && grep -q 'README.md' '$out'"
check "the daemon stopped afterwards" \
	sh -c "! '$BUILD/cli/cryptoctl' --socket '$tmp/cryptod.sock' ping >/dev/null 2>&1"

QUICKSTART_PREBUILT=$tmp/nowhere timeout 60 bash "$QS" >"$out" 2>&1
rc=$?
check "a failing step: exit 1" test "$rc" -eq 1
check "a failing step: FAILED and its log's tail" \
	sh -c "grep -q ' \.\.\. FAILED$' '$out' && grep -q '^--- the last 40 lines of ' '$out'"

echo "quickstart: $pass checks passed, $fail failed"
[ "$fail" -eq 0 ]
