#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl stats (tables, --json, a held queue's row) and a daemon that
# cannot be reached (exit 1).
#
#   test_cryptoctl_stats.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]   (cryptoctl_lib.sh)
set -u
. "$(dirname "$0")/cryptoctl_lib.sh"

# ---------------------------------------------------------------------------
section "stats"
json_sum()
{
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(e[sys.argv[2]] for e in d["engines"]))' "$1" "$2"
}
ctl stats --json
cp "$out" "$tmp/stats1.json"
check "stats --json: exit 0" test "$rc" -eq 0
check "stats --json parses" python3 -m json.tool "$tmp/stats1.json" >/dev/null

key=$(randhex 16)
iv=$(randhex 12)
head -c 1000 /dev/urandom >"$tmp/pt"
for _ in 1 2 3 4 5; do
	"$CTL" encrypt -k "$key" -i "$iv" <"$tmp/pt" >"$tmp/ct"
done
flip 10
"$CTL" decrypt -k "$key" -i "$iv" <"$tmp/bad" >/dev/null 2>&1

ctl stats --json
cp "$out" "$tmp/stats2.json"
check "stats --json parses after ops" \
	python3 -m json.tool "$tmp/stats2.json" >/dev/null
ops1=$(json_sum "$tmp/stats1.json" ops)
ops2=$(json_sum "$tmp/stats2.json" ops)
bytes1=$(json_sum "$tmp/stats1.json" bytes)
bytes2=$(json_sum "$tmp/stats2.json" bytes)
af1=$(json_sum "$tmp/stats1.json" auth_failures)
af2=$(json_sum "$tmp/stats2.json" auth_failures)
check "engine ops grew by >= 5 ($ops1 -> $ops2)" \
	test $((ops2 - ops1)) -ge 5
check "engine bytes grew by >= 5000 ($bytes1 -> $bytes2)" \
	test $((bytes2 - bytes1)) -ge 5000
check "engine auth failures grew ($af1 -> $af2)" test $((af2 - af1)) -ge 1

ctl stats
check "stats: exit 0" test "$rc" -eq 0
check "stats: header line" grep -Eq '^uptime .*workers [0-9]+.*clients [0-9]+.*sessions [0-9]+' "$out"
check "stats: engine table" grep -Eq '^ENGINE +OPS +BYTES +ERRORS +AUTH-FAIL$' "$out"
# The engine that ran the ops above shows them (columns align under the
# header: every engine row has as many fields as the header).
check "stats: an engine row with ops" \
	awk '/^ENGINE/ { t = 1; n = NF; next } t && NF == 0 { exit } t && NF == n && $2 > 0 { f = 1 } END { exit !f }' "$out"

if [ -x "$HOLD" ]; then
	# The daemon keeps printable ASCII only; quote and backslash must be
	# escaped in JSON.
	name='cli "q" \back'
	coproc "$HOLD" "$sock" "$name" 7 512
	hpid=$COPROC_PID
	read -r -t 10 ready <&"${COPROC[0]}"
	check "hold_queue ready" test "${ready:-}" = ready
	ctl stats --json
	cp "$out" "$tmp/stats3.json"
	check "stats --json with a queue parses" \
		python3 -m json.tool "$tmp/stats3.json" >/dev/null
	python3 - "$tmp/stats3.json" "$hpid" "$name" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
q = [q for q in d["queues"] if q["pid"] == int(sys.argv[2])]
assert len(q) == 1, d["queues"]
q = q[0]
assert q["client_name"] == sys.argv[3], q
assert q["ops"] >= 7 and q["bytes"] >= 7 * 512, q
assert q["in_flight"] == 0, q
EOF
	check "stats --json: the queue's pid, name (escaped), ops" test $? -eq 0
	ctl stats
	check "stats: queue table" grep -Eq '^CLIENT +QUEUE +PID +UID +SESSIONS +IN-FLIGHT +OPS +BYTES +ERRORS +AUTH-FAIL +RETRIES +EMPTY-POLLS +WAKEUPS +NAME$' "$out"
	check "stats: queue row with pid and name" \
		grep -Eq "^ *[0-9]+ +[0-9]+ +$hpid +[0-9]+ +[0-9]+ +0 +[0-9]+ .* cli \"q\" \\\\back$" "$out"
	exec {COPROC[1]}>&-
	wait "$hpid"
	hpid=
else
	echo "  skipped queue rows: no hold_queue helper given"
fi

# ---------------------------------------------------------------------------
section "daemon unreachable: exit 1"
nosock=$tmp/nowhere.sock
ctl --socket "$nosock" ping
check "ping: exit 1" test "$rc" -eq 1
check "ping: one line naming the socket" \
	grep -q "^cryptoctl: cannot connect to $nosock: .*is cryptod running?" "$err"
check "ping: one line" test "$(lines "$err")" -eq 1
CRYPTOD_SOCKET=$nosock "$CTL" stats >"$out" 2>"$err"
check "stats via \$CRYPTOD_SOCKET: exit 1" test $? -eq 1
check "stats: names the socket" grep -q "cannot connect to $nosock" "$err"
echo hello | "$CTL" --socket "$nosock" encrypt -k "$K16" -i "$IV12" >"$out" 2>"$err"
check "encrypt: exit 1" test $? -eq 1
check "encrypt: nothing on stdout" test ! -s "$out"

finish test_cryptoctl_stats
