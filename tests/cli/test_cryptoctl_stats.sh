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
# The programs view while the held client ($hpid, $name, reporting
# 4,2,1) is connected.
programs_checks()
{
	local uid lpid long
	uid=$(id -u)
	ctl clients --json
	python3 - "$out" "$hpid" <<'EOF'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["clients"] if c["pid"] == int(sys.argv[2])]
assert len(c) == 1, c
c = c[0]
assert c["usage_reported"] is True, c
assert (c["offloaded"], c["fallbacks"], c["inprocess"]) == (4, 2, 1), c
EOF
	check "clients --json: the held client's report" test $? -eq 0
	ctl clients --wide
	check "clients: OFFLOAD FALLBACK IN-PROC columns" \
		grep -Eq '^CLIENT .* ARENA +OFFLOAD +FALLBACK +IN-PROC +NAME$' "$out"
	check "clients: the held client's report" \
		grep -Fq ' 4         2        1  cli "q" \back' "$out"
	check "clients: '-' for a client that reported nothing" \
		grep -Eq ' - +- +- +cryptoctl$' "$out"

	ctl stats --json
	python3 - "$out" "$name" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("engines", "queues", "session_list", "total_queues", "clients"):
    assert k in d, k  # the fields that were there stay
p = [p for p in d["programs"] if p["name"] == sys.argv[2]]
assert len(p) == 1, d["programs"]
p = p[0]
assert p["connections"] == 1 and p["queues"] == 1, p
assert p["ops"] >= 7 and p["bytes"] >= 7 * 512 and p["errors"] == 0, p
assert (p["offloaded"], p["fallbacks"], p["inprocess"]) == (4, 2, 1), p
assert p["other"] is False and p["idle_ms"] == 0, p
EOF
	check "stats --json: programs[] has the held client's program" test $? -eq 0

	ctl stats --prometheus
	cp "$out" "$tmp/prom"
	check "stats --prometheus passes the strict checker" \
		python3 "$(dirname "$0")/prom_check.py" "$tmp/prom" \
		cryptod_program_ops_total cryptod_program_fallbacks_total \
		cryptod_program_inprocess_messages_total
	local lbl='program="cli \"q\" \\back",uid="'$uid'"'
	check "prometheus: the program's fallbacks, its label escaped" \
		grep -Fqx "cryptod_program_fallbacks_total{$lbl} 2" "$tmp/prom"
	check "prometheus: its open queue" \
		grep -Fqx "cryptod_program_queues{$lbl} 1" "$tmp/prom"

	# A 64-byte name: the table still fits 100 columns, the name cut.
	long=$(printf 'p%.0s' $(seq 64))
	coproc LONG { "$HOLD" "$sock" "$long" 1 64 9,0,0; }
	lpid=$LONG_PID
	read -r -t 10 ready <&"${LONG[0]}"
	check "second hold_queue ready" test "${ready:-}" = ready
	ctl stats
	awk '/^Programs/ { t = 1 } t' "$out" >"$tmp/progs.txt"
	check "stats: programs table header" \
		grep -Eq '^PROGRAM +UID +CONNS +QUEUES +OPS +BYTES +ERRORS +OFFLOAD +FALLBACK +IN-PROC$' "$tmp/progs.txt"
	check "stats: the held program's row" \
		grep -Eq "^cli \"q\" \\\\back +$uid\\($(id -nu "$uid")\\) +1 +1 +[0-9]+ +[0-9.]+[KMGTPE]? +0 +4 +2 +1$" "$tmp/progs.txt"
	check "stats: the programs table fits 100 columns" \
		awk 'length($0) > 100 { exit 1 }' "$tmp/progs.txt"
	check "stats: a long name is cut and marked" \
		grep -Eq "^p+~ +$uid\\($(id -nu "$uid")\\) +1 +1 +1 +64 +0 +9 +0 +0$" "$tmp/progs.txt"
	ctl stats --watch 0.2 --count 2
	check "stats --watch: a programs table with rates" \
		grep -Eq '^PROGRAM +UID +CONNS +OPS/s +Gbps +ERR/s +OFFLOAD/s +FALLBACK/s +IN-PROC/s$' "$out"
	check "stats --watch: the held program's row" \
		grep -Fq 'cli "q" \back' "$out"
	check "stats --watch: the long name cut, rows within 100 columns" \
		awk '/^PROGRAM/ { t = 1 } t && length($0) > 100 { exit 1 } /^p+~ / { f = 1 } END { exit !f }' "$out"
	exec {LONG[1]}>&-
	wait "$lpid"
}

# After the held client went: its program stays, with its counts.
programs_after()
{
	ctl stats --json
	python3 - "$out" "$name" <<'EOF'
import json, sys
p = [p for p in json.load(open(sys.argv[1]))["programs"] if p["name"] == sys.argv[2]]
assert len(p) == 1, p
p = p[0]
assert p["connections"] == 0 and p["connections_total"] == 1, p
assert p["queues"] == 0 and p["ops"] >= 7, p
assert (p["offloaded"], p["fallbacks"], p["inprocess"]) == (4, 2, 1), p
EOF
	check "stats --json: the program outlives its connection" test $? -eq 0
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
check "stats: header line" grep -Eq '^cryptod: up [0-9]{2}:[0-9]{2}:[0-9]{2}, [0-9]+ workers? .*, [0-9]+ clients?, [0-9]+ sessions?$' "$out"
check "stats: engine table" grep -Eq '^ENGINE +OK-OPS +BYTES +ERRORS +AUTH-FAIL$' "$out"
# The engine that ran the ops above shows them (columns align under the
# header: every engine row has as many fields as the header).
check "stats: an engine row with ops" \
	awk '/^ENGINE/ { t = 1; n = NF; next } t && NF == 0 { exit } t && NF == n && $2 > 0 { f = 1 } END { exit !f }' "$out"

if [ -x "$HOLD" ]; then
	# The daemon keeps printable ASCII only; quote and backslash must be
	# escaped in JSON.
	name='cli "q" \back'
	coproc "$HOLD" "$sock" "$name" 7 512 4,2,1
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
	ctl stats --wide
	check "stats --wide: names whole" grep -q 'cli "q" \\back$' "$out"
	check "stats: queue table" grep -Eq '^CLIENT +QUEUE +PID +UID +SESSIONS +IN-FLIGHT +OPS +BYTES +ERRORS +AUTH-FAIL +RETRIES +EMPTY-POLLS +WAKEUPS +NAME$' "$out"
	check "stats: queue row with pid and name" \
		grep -Eq "^ *[0-9]+ +[0-9]+ +$hpid +[0-9]+ +[0-9]+ +0 +[0-9]+ .* cli \"q\" \\\\back$" "$out"
	ctl stats
	check "stats: queue table within 100 columns" grep -Eq '^CLIENT +QUEUE +PID +IN-FLIGHT +OPS +BYTES +ERRORS +AUTH-FAIL +NAME$' "$out"
	programs_checks
	exec {COPROC[1]}>&-
	wait "$hpid"
	hpid=
	programs_after
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
