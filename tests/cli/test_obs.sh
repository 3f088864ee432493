#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Observability end to end: a real cryptod (one worker, so counts are
# exact) on a temporary socket, a client with a known workload (obs_load),
# and cryptoctl's stats (tables, JSON, Prometheus, --watch), clients,
# sessions, ping and version, including what a non-administrator sees.
# No timing decides anything.
#
#   test_obs.sh CRYPTOD CRYPTOCTL OBS_LOAD PROM_CHECK
set -u

DAEMON=$1
CTL=$2
LOAD=$3
PROMCHK=$4

if ! command -v python3 >/dev/null; then
	echo "skipped: python3 is needed"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptod-obs.XXXXXX") || exit 1
chmod 755 "$tmp" # nobody must reach the socket
sock=$tmp/cryptod.sock
dpid=
lpid=
npid=
pass=0
fail=0

cleanup()
{
	exec 7>&- 2>/dev/null
	exec 5>&- 2>/dev/null
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null
	[ -n "$npid" ] && kill "$npid" 2>/dev/null
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

ok() { pass=$((pass + 1)); echo "ok: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check()
{
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else bad "$desc"; fi
}

# ctl ARGS...: stdout in $out, stderr in $err, status in $rc.
out=$tmp/out
err=$tmp/err
ctl()
{
	"$CTL" --socket "$sock" "$@" >"$out" 2>"$err"
	rc=$?
}
# The same as nobody.
ctl_nobody()
{
	"$LOAD" --as-nobody "$CTL" --socket "$sock" "$@" >"$out" 2>"$err"
	rc=$?
}
# wait_ready FILE: the load client printed "ready" (20 s at most).
wait_ready()
{
	for _ in $(seq 400); do
		grep -q '^ready' "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# py EXPR over the JSON in $out (as j): true when it holds.
py()
{
	python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$out"
}

"$DAEMON" --socket "$sock" --socket-mode 0666 --workers 1 \
	--log-level warn 2>"$tmp/daemon.log" &
dpid=$!
for _ in $(seq 100); do
	[ -S "$sock" ] && break
	sleep 0.05
done
if [ ! -S "$sock" ]; then
	echo "FAIL: daemon did not start" >&2
	cat "$tmp/daemon.log" >&2
	exit 1
fi

# ---- exact counters -------------------------------------------------------
N=40 F=3 E=2 LEN=512
ctl stats --json
cp "$out" "$tmp/before.json"
# Each load client holds its queue until its stdin (a fifo) closes.
mkfifo "$tmp/load.in" "$tmp/nload.in"
"$LOAD" "$sock" obs-load "$N" "$F" "$E" "$LEN" <"$tmp/load.in" \
	>"$tmp/load.out" &
lpid=$!
exec 7>"$tmp/load.in"
check "load client ran its workload" wait_ready "$tmp/load.out"

ctl stats --json
check "stats --json exits 0" test "$rc" = 0
cp "$out" "$tmp/after.json"
python3 - "$tmp/before.json" "$tmp/after.json" "$N" "$F" "$E" "$LEN" <<'EOF' >"$tmp/exact.log" 2>&1
import json, sys
b, a = (json.load(open(p)) for p in sys.argv[1:3])
n, f, e, ln = map(int, sys.argv[3:])
errs = []
def eq(what, got, want):
    if got != want:
        errs.append(f"{what}: {got} != {want}")
qs = [q for q in a["queues"] if q["client_name"] == "obs-load"]
eq("obs-load queues", len(qs), 1)
q = qs[0]
eq("queue ops", q["ops"], n + f + e)
eq("queue bytes", q["bytes"], n * ln)
eq("queue auth_failures", q["auth_failures"], f)
eq("queue errors", q["errors"], e)
eq("queue in_flight", q["in_flight"], 0)
eq("queue latency count", q["latency"]["count"], n + f + e)
L = q["latency"]
if not (0 < L["p50_ns"] <= L["p90_ns"] <= L["p99_ns"] <= L["p999_ns"]):
    errs.append(f"queue percentiles not ordered: {L}")
if not L["sum_ns"] > 0:
    errs.append("queue latency sum is 0")
def eng(j, name):
    return next(x for x in j["engines"] if x["name"] == name)
ea, eb = eng(a, "aesni"), eng(b, "aesni")
eq("aesni ops", ea["ops"] - eb["ops"], n)
eq("aesni bytes", ea["bytes"] - eb["bytes"], n * ln)
eq("aesni auth_failures", ea["auth_failures"] - eb["auth_failures"], f)
eq("aesni errors", ea["errors"] - eb["errors"], 0)
eq("workers listed", len(a["worker_stats"]), 1)
wa, wb = a["worker_stats"][0], b["worker_stats"][0]
eq("worker ops", wa["ops"] - wb["ops"], n + f + e)
eq("worker bytes", wa["bytes"] - wb["bytes"], n * ln)
eq("worker auth_failures", wa["auth_failures"] - wb["auth_failures"], f)
eq("worker errors", wa["errors"] - wb["errors"], e)
eq("worker latency count", wa["latency"]["count"] - wb["latency"]["count"], n + f + e)
if not wa["runs"] > wb["runs"] or not wa["passes"] > wb["passes"]:
    errs.append("worker runs/passes did not move")
W = wa["latency"]
if not (0 < W["p50_ns"] <= W["p90_ns"] <= W["p99_ns"] <= W["p999_ns"]):
    errs.append(f"worker percentiles not ordered: {W}")
ss = [s for s in a["session_list"] if s["client_id"] == q["client_id"]]
eq("obs-load sessions", len(ss), 1)
s = ss[0]
eq("session alg", s["alg"], "aes-gcm")
eq("session key_bits", s["key_bits"], 128)
eq("session engine", s["engine"], "aesni")
eq("session ops", s["ops"], n)
eq("session bytes", s["bytes"], n * ln)
eq("session auth_failures", s["auth_failures"], f)
eq("session errors", s["errors"], 0)  # the bad-session ops are not its
for e_ in errs:
    print(e_)
sys.exit(1 if errs else 0)
EOF
check "exact counters per queue, worker, engine, session" test $? = 0
cat "$tmp/exact.log"

ctl stats
check "stats tables exit 0" test "$rc" = 0
check "stats tables: workers, latency, sessions" \
	grep -q "^WORKER" "$out"
check "stats tables: service time section" \
	grep -q "^Service time per op" "$out"
check "stats tables: the session row" grep -Eq "aes-gcm +128 +aesni" "$out"

# ---- Prometheus -----------------------------------------------------------
ctl stats --prometheus
check "stats --prometheus exits 0" test "$rc" = 0
cp "$out" "$tmp/metrics.prom"
check "prometheus output passes the strict checker" \
	python3 "$PROMCHK" "$tmp/metrics.prom" cryptod_up \
	cryptod_engine_ops_total cryptod_worker_ops_total \
	cryptod_worker_service_seconds cryptod_queue_ops_total \
	cryptod_queue_service_seconds cryptod_queue_in_flight \
	cryptod_session_ops_total
check "prometheus: the load queue's exact op count" \
	grep -Eq "^cryptod_queue_ops_total\{client=\"[0-9]+\",queue=\"[0-9]+\",client_name=\"obs-load\"\} $((N + F + E))$" \
	"$tmp/metrics.prom"
check "prometheus: the session's exact auth failures" \
	grep -Eq "^cryptod_session_auth_failures_total\{.*alg=\"aes-gcm\",engine=\"aesni\"\} $F$" \
	"$tmp/metrics.prom"
if command -v promtool >/dev/null; then
	check "promtool check metrics" \
		sh -c "promtool check metrics <'$tmp/metrics.prom'"
fi
# The checker must catch what it claims to.
printf 'x_total 1\n' >"$tmp/bad1.prom"
printf '# HELP a_total h\n# TYPE a_total counter\na_total 1\n# HELP b h\n# TYPE b gauge\nb 1\na_total{x="1"} 2\n' >"$tmp/bad2.prom"
printf '# HELP a h\n# TYPE a gauge\na{x="\\q"} 1\n' >"$tmp/bad3.prom"
printf '# HELP a h\n# TYPE a counter\na 1\n' >"$tmp/bad4.prom"
printf '# HELP s h\n# TYPE s summary\ns{quantile="0.5"} 2\ns{quantile="0.9"} 1\ns_sum 1\ns_count 1\n' >"$tmp/bad5.prom"
for b in 1 2 3 4 5; do
	check "checker rejects bad$b.prom" \
		sh -c "! python3 '$PROMCHK' '$tmp/bad$b.prom' >/dev/null"
done

# ---- --watch without a terminal -----------------------------------------
ctl stats --watch 0.2 --count 3
check "stats --watch --count 3 exits 0" test "$rc" = 0
check "--watch prints 3 snapshots when stdout is not a tty" \
	test "$(grep -c '^--- snapshot' "$out")" = 3
check "--watch writes no escape sequences to a pipe" \
	sh -c "! grep -q \$'\\033' '$out'"
check "--watch shows the load queue" grep -q "obs-load" "$out"
ctl stats --watch=0.1 -n 2
check "--watch=SECONDS form" test "$(grep -c '^--- snapshot' "$out")" = 2
ctl stats --watch 0.01
check "--watch rejects 0.01 s (exit 2)" test "$rc" = 2
ctl stats --json --prometheus
check "--json with --prometheus is a usage error" test "$rc" = 2
ctl stats --count 2
check "--count without --watch is a usage error" test "$rc" = 2

# ---- clients and sessions -------------------------------------------------
ctl clients --json
check "clients --json exits 0" test "$rc" = 0
check "root sees the load client and itself" \
	py 'any(c["name"] == "obs-load" and c["queues"] == 1 and c["sessions"] == 1 and c["ops"] == '$((N + F + E))' for c in j["clients"]) and any(c["name"] == "cryptoctl" for c in j["clients"])'
ctl clients
check "clients table" grep -q "obs-load" "$out"
ctl sessions --json
check "root sees the load session" \
	py 'any(s["alg"] == "aes-gcm" and s["key_bits"] == 128 and s["ops"] == '$N' for s in j["sessions"])'
check "sessions carry no key bytes" \
	sh -c "! grep -qi '0102030405060708090a0b0c0d0e0f10' '$out'"
check "sessions carry only the documented fields" \
	py 'all(set(s) == {"client_id", "session_id", "pid", "uid", "user", "alg", "key_bits", "engine", "tag_len", "ops", "bytes", "errors", "auth_failures"} for s in j["sessions"])'
ctl sessions
check "sessions table" grep -Eq "aes-gcm +128 +aesni" "$out"

# A non-administrator sees its own connection only.
ctl_nobody clients --json
check "nobody: clients exits 0" test "$rc" = 0
check "nobody sees only its own connection" \
	py 'len(j["clients"]) == 1 and j["clients"][0]["uid"] != 0 and j["clients"][0]["name"] == "cryptoctl"'
ctl_nobody sessions --json
check "nobody sees no sessions of others" py 'j["sessions"] == []'
ctl_nobody stats --json
check "nobody sees no queues of others" py 'j["queues"] == [] and j["session_list"] == []'
# Key pair ops (a root sign just now) are daemon-wide: root's alone.
openssl genpkey -algorithm ED25519 -out "$tmp/ed.pem" 2>/dev/null
echo hi | "$CTL" --socket "$sock" sign --key-file "$tmp/ed.pem" >/dev/null
ctl stats --json
check "root sees the key pair op" py \
	'[k["sign"] for k in j["key_pair_ops"] if k["alg"] == "ed25519"] == [1]'
ctl_nobody stats --json
check "nobody sees no key pair ops" py 'j["key_pair_ops"] == []'

# A nobody client with its own session: root sees it, another nobody
# connection does not.
"$LOAD" --as-nobody "$LOAD" "$sock" nobody-load 5 0 0 64 \
	<"$tmp/nload.in" >"$tmp/nload.out" &
npid=$!
exec 5>"$tmp/nload.in"
check "nobody's load client ran" wait_ready "$tmp/nload.out"
ctl sessions --json
check "root sees nobody's session" \
	py 'any(s["uid"] != 0 and s["ops"] == 5 for s in j["sessions"])'
ctl_nobody sessions --json
check "another nobody connection does not see it" py 'j["sessions"] == []'
exec 5>&-
wait "$npid"
check "nobody's load client finished cleanly" test $? = 0
npid=

# ---- ping, version, help --------------------------------------------------
ctl ping
check "ping: healthy daemon exits 0" test "$rc" = 0
check "ping says healthy" grep -q "^healthy" "$out"
"$CTL" --socket "$tmp/none.sock" ping >"$out" 2>"$err"
check "ping: no daemon exits 1" test $? = 1
ctl ping --bogus
check "ping: bad option exits 2" test "$rc" = 2

# Degraded: the configuration routes an algorithm to an engine that is
# unavailable (the kernel engine, where this kernel has no AF_ALG).
routed_daemon() # ROUTE: start a second daemon with that route; sets rsock
{
	rsock=$tmp/routed.sock
	printf 'socket = %s\nworkers = 1\nroute.aes-cbc = %s\n' "$rsock" "$1" \
		>"$tmp/routed.conf"
	"$DAEMON" --config "$tmp/routed.conf" --log-level error \
		2>>"$tmp/daemon.log" &
	rpid=$!
	for _ in $(seq 100); do
		[ -S "$rsock" ] && return 0
		sleep 0.05
	done
	return 1
}
routed_daemon openssl
"$CTL" --socket "$rsock" ping >"$out" 2>"$err"
check "ping: a route to an available engine is healthy (0)" test $? = 0
kill "$rpid"; wait "$rpid" 2>/dev/null
routed_daemon kernel
"$CTL" --socket "$rsock" engines --json >"$tmp/engines.json" 2>/dev/null
if python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if any(a['alg'] == 'aes-cbc' and a['engine'] == 'kernel' and not a['available'] for a in j['algorithms']) else 1)" "$tmp/engines.json"; then
	"$CTL" --socket "$rsock" ping >"$out" 2>"$err"
	check "ping: a route to an unavailable engine is degraded (4)" test $? = 4
	check "ping says which route and why" \
		grep -q "^degraded: aes-cbc is routed to engine kernel, which is unavailable: " "$out"
	check "ping: within 100 columns" awk 'length > 100 { b = 1 } END { exit b }' "$out"
	"$CTL" --socket "$rsock" ping --json >"$out" 2>"$err"
	check "ping --json, degraded: exit 4" test $? = 4
	check "ping --json, degraded: status, the route and its reason" \
		py 'j["status"] == "degraded" and any(d["alg"] == "aes-cbc" and d["engine"] == "kernel" and d["reason"] for d in j["degraded"])'
else
	echo "skipped: degraded ping (the kernel engine is available here)"
fi
kill "$rpid"; wait "$rpid" 2>/dev/null
ctl version
check "version exits 0 and names both" \
	sh -c "test $rc = 0 && grep -q '^cryptoctl ' '$out' && grep -q '^cryptod ' '$out'"
for cmd in stats clients sessions ping version; do
	ctl "$cmd" --help
	check "$cmd --help exits 0" sh -c "test $rc = 0 && grep -q '^Usage: cryptoctl $cmd' '$out'"
done

exec 7>&-
wait "$lpid"
check "load client finished cleanly" test $? = 0
lpid=
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
