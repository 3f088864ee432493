#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl's conventions across commands: descriptors 0-2 closed at
# start, --json wherever a command prints data (and with --watch, one
# object a line), cryptod_up 0 without a daemon, exit statuses as
# documented, messages that say what is valid, and default text output
# within 100 columns.
#
#   test_cryptoctl_conventions.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]
set -u
. "$(dirname "$0")/cryptoctl_lib.sh"

# json_ok FILE: FILE is one JSON object (python3 parses it)
json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }

# ---------------------------------------------------------------------------
section "descriptors 0-2 closed at start"
"$CTL" stats >&- 2>"$err"
rc=$?
check "stats, stdout closed: exit 1" test "$rc" -eq 1
check "stats, stdout closed: says so" grep -q 'stdout is closed' "$err"
"$CTL" stats --watch 0.1 --count 2 >&- 2>"$err"
check "stats --watch, stdout closed: exit 1, says so" \
	test $? -eq 1 -a "$(grep -c 'stdout is closed' "$err")" -eq 1
# stdin and stderr closed: the socket must not become fd 0 or 2.
"$CTL" stats --json <&- 2>&- >"$out"
check "stats --json, stdin and stderr closed: exit 0, valid JSON" \
	test $? -eq 0 && check "  ... valid" json_ok "$out"
timeout 10 "$CTL" encrypt -k "$K16" -i "$IV12" <&- >"$out" 2>"$err"
rc=$?
check "encrypt, stdin closed: exit 1, no hang (rc $rc)" test "$rc" -eq 1 -a ! -s "$out"
check "encrypt, stdin closed: 'stdin is closed'" grep -q 'stdin is closed' "$err"
timeout 10 "$CTL" --socket "$tmp/nowhere" ping 2>&- >"$out"
check "ping without a daemon, stderr closed: exit 1" test $? -eq 1

# ---------------------------------------------------------------------------
section "--json wherever a command prints data"
# (key list --json: test_cryptoctl_key.sh, which configures named keys)
for cmd in "ping" "version" "engines" "clients" "sessions" "stats"; do
	# shellcheck disable=SC2086 # cmd is a command and its subcommand
	ctl $cmd --json
	check "$cmd --json: exit 0, nothing on stderr" test "$rc" -eq 0 -a ! -s "$err"
	check "$cmd --json: one JSON document" json_ok "$out"
done
ctl ping --json
check "ping --json: status healthy" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"] == "healthy" and d["degraded"] == [] and d["daemon_version"]' "$out"
ctl version --json
check "version --json: cryptoctl and daemon versions" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["cryptoctl"] and d["daemon"]' "$out"
ctl --socket "$tmp/nowhere" ping --json
check "ping --json, no daemon: exit 1" test "$rc" -eq 1
check "ping --json, no daemon: status unreachable" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"] == "unreachable"' "$out"
ctl --socket "$tmp/nowhere" version --json
check "version --json, no daemon: exit 0, daemon null" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["daemon"] is None and d["error"]' "$out"
ctl stats --watch 0.1 --count 3 --json
check "stats --watch --json: exit 0" test "$rc" -eq 0 -a ! -s "$err"
check "stats --watch --json: one object a line, snapshots 1-3" python3 - "$out" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 3, lines
objs = [json.loads(l) for l in lines]
assert [o["snapshot"] for o in objs] == [1, 2, 3]
assert all("engines" in o and "worker_stats" in o for o in objs)
assert objs[0]["uptime_ms"] <= objs[2]["uptime_ms"]
PY
ctl stats --json --watch 0.1 --count 1
check "stats --json --watch (either order)" test "$rc" -eq 0 -a "$(lines "$out")" -eq 1
expect_usage stats --json --prometheus
expect_usage stats --prometheus --watch

# ---------------------------------------------------------------------------
section "stats --prometheus: cryptod_up"
ctl stats --prometheus
check "with a daemon: cryptod_up 1" grep -qx 'cryptod_up 1' "$out"
ctl --socket "$tmp/nowhere" stats --prometheus
check "no daemon: exit 0 (documented)" test "$rc" -eq 0
check "no daemon: cryptod_up 0" grep -qx 'cryptod_up 0' "$out"
check "no daemon: HELP and TYPE too" grep -qx '# TYPE cryptod_up gauge' "$out"
check "no daemon: the reason on stderr" grep -q 'cannot connect' "$err"

# ---------------------------------------------------------------------------
section "exit statuses as documented"
ctl decrypt -k "$K16" -i "$IV12" < <(head -c 5 /dev/zero)
check "decrypt, truncated below the tag: exit 2 (input length)" test "$rc" -eq 2 -a ! -s "$out"
head -c 64 /dev/zero | "$CTL" encrypt -k "$K16" -i "$IV12" >"$tmp/ct"
flip 70
ctl decrypt -k "$K16" -i "$IV12" --in "$tmp/bad"
check "decrypt, bad tag: exit 3" test "$rc" -eq 3 -a ! -s "$out"
ctl decrypt -k "$K16" -i "$IV12" --in <(head -c 60 "$tmp/ct")
check "decrypt, truncated ciphertext (tag cut): exit 3" test "$rc" -eq 3 -a ! -s "$out"
expect_usage stats --bogus
expect_usage ping extra
ctl --socket "$tmp/nowhere" stats
check "daemon unreachable: exit 1" test "$rc" -eq 1

# ---------------------------------------------------------------------------
section "messages that say what is valid"
ctl encrypt -k 0001020 -i "$IV12" </dev/null
check "odd-length hex: exit 2" test "$rc" -eq 2
check "odd-length hex: says two digits per byte" grep -q -- '--key: 7 hex digits, an odd number: two per byte' "$err"
ctl encrypt -k 00010g03 -i "$IV12" </dev/null
check "a bad hex digit: its position and what is valid" \
	grep -q -- '--key: character 6 is not a hex digit (0-9, a-f, A-F' "$err"
check "  ... and never the key's characters" sh -c "! grep -q 00010g03 '$err'"
ctl encrypt -a aes-999-gcm -k "$K16" </dev/null
check "unknown algorithm: the valid ones listed" \
	sh -c "test $rc -eq 2 && grep -q 'aes-gcm' '$err' && grep -q 'chacha20-poly1305' '$err'"
ctl key create k1 --alg nope
check "key --alg unknown: points to cryptoctl engines" \
	sh -c "test $rc -eq 2 && grep -q \"'cryptoctl engines' lists\" '$err'"
# The README's example key, written out (it once read -k 0001...1e1f).
K32R=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
printf 'attack at dawn' | "$CTL" encrypt -a aes-256-gcm -k "$K32R" \
	-i 000000000000000000000000 --aad 6869 >"$tmp/readme.ct"
ctl decrypt -a aes-256-gcm -k "$K32R" -i 000000000000000000000000 --aad 6869 --in "$tmp/readme.ct"
check "the README's encrypt and decrypt round trip" test "$rc" -eq 0 -a "$(cat "$out")" = "attack at dawn"
check "the README has no elided key" sh -c "! grep -q -- '-k 0001\.\.\.' '$(dirname "$0")/../../README.md'"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	# $tmp is 0700: nobody cannot reach the socket.
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" ping >"$out" 2>"$err"
	rc=$?
	check "permission denied: exit 1" test "$rc" -eq 1
	check "permission denied: names the directory that refuses" \
		grep -q "Permission denied - $tmp is root:root mode 0700, for root only" "$err"
	check "permission denied: no group hint where no group may" \
		sh -c "! grep -q usermod '$err'"
else
	echo "skipped: the permission hint (needs root and setpriv)"
fi

# ---------------------------------------------------------------------------
section "one vocabulary across views"
ctl stats
check "stats: '1 client' (cryptoctl's own connection), no '1 clients'" \
	grep -Eq '^cryptod: up [0-9]{2}:[0-9]{2}:[0-9]{2}, 2 workers .*, 1 client, 0 sessions$' "$out"
head1=$(head -n 1 "$out" | sed 's/up [0-9:]*/up T/')
ctl stats --watch 0.1 --count 1
check "stats --watch: the same head line, the same uptime format" \
	test "$(sed -n 2p "$out" | sed 's/up [0-9:]*/up T/; s/; every.*//')" = "$head1"
ctl stats
check "stats: engines count OK-OPS, workers OPS (labelled apart)" \
	sh -c "grep -Eq '^ENGINE +OK-OPS ' '$out' && grep -Eq '^WORKER +STATE +OPS ' '$out'"
# Load while watching: a worker that completed ops in an interval is busy,
# whatever its sleep flag said at the instant of the snapshot.
(
	while :; do
		head -c 4096 /dev/zero | "$CTL" encrypt -k "$K16" -i "$IV12" >/dev/null 2>&1
	done
) &
loadpid=$!
ctl stats --watch 0.3 --count 5
kill "$loadpid" 2>/dev/null
wait "$loadpid" 2>/dev/null
check "stats --watch under load: some worker busy" \
	awk '$1 ~ /^[0-9]+$/ && $2 == "busy" { f = 1 } END { exit !f }' "$out"
check "stats --watch under load: no worker with ops in the interval is asleep" \
	awk '/^WORKER/ { w = 1; next } NF == 0 { w = 0 }
		w && $3 != "-" && $3 != "0" && $2 != "busy" { bad = 1 } END { exit bad }' "$out"

# ---------------------------------------------------------------------------
section "default text output within 100 columns (--wide: all of it)"
# A queue with a session, counters and a 64-byte client name.
long=$(printf 'n%.0s' $(seq 64))
if [ -x "$HOLD" ]; then
	coproc HQ { "$HOLD" "$sock" "$long" 100000 1024; }
	read -r _ <&"${HQ[0]}"
fi
# widest FILE: its longest line's length
widest() { awk '{ if (length > m) m = length } END { print m + 0 }' "$1"; }
for cmd in "stats" "clients" "sessions" "engines" "ping" "version" "help" \
	"stats --watch 0.1 --count 2" "stats --help" "engines --help" \
	"clients --help" "encrypt --help" "decrypt --help" "digest --help" \
	"mac --help" "key --help" "bench --help" "ping --help" "version --help"; do
	# shellcheck disable=SC2086 # a command and its options
	ctl $cmd
	w=$(widest "$out")
	check "$cmd: exit 0, widest line $w <= 100" test "$rc" -eq 0 -a "$w" -le 100
done
if [ -n "${HQ_PID:-}" ]; then
	ctl stats
	check "stats: a long client name is cut, ending in ~" grep -q ' nnnnnnnnnnnnnnnnnnn~$' "$out"
	ctl stats --wide
	check "stats --wide: the whole name" grep -q "$long\$" "$out"
	check "stats --wide: the columns left out by default" \
		sh -c "grep -Eq '^WORKER +STATE +OPS +BYTES +ERRORS +AUTH-FAIL +PASSES +RUNS +EMPTY-POLLS +WAKEUPS +P50 +P90 +P99 +P99.9$' '$out'"
	ctl clients --wide
	check "clients --wide: ARENA, OFFLOAD, ..." grep -Eq ' GID .* ARENA +OFFLOAD +FALLBACK +IN-PROC +NAME$' "$out"
	exec {HQ[1]}>&-
	wait "$HQ_PID" 2>/dev/null
fi
ctl engines --wide
check "engines --wide: the AAD column" grep -Eq '^ALGORITHM .* TAG +AAD +LENGTH$' "$out"

finish conventions
