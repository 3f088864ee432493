#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The Prometheus exporter, 'cryptoctl stats --serve', scraped for real:
# a cryptod on a temporary socket, the exporter on an ephemeral port,
# curl as the scraper. Status, content type, counters that grow between
# two scrapes, the strict checker and promtool on what it serves, 404/405/
# 400/431, a silent and a slow client beside a scrape (and their
# deadline), 503 while the daemon is stopped and 200 when it is back, the
# sockets systemd passes (LISTEN_FDS), usage errors, SIGTERM; and the
# Grafana dashboard against a real scrape (dashboard_check.py).
#
#   test_metrics.sh CRYPTOD CRYPTOCTL OBS_LOAD PROM_CHECK DASHBOARD_CHECK DASHBOARD
set -u

DAEMON=$1
CTL=$2
LOAD=$3
PROMCHK=$4
DASHCHK=$5
DASHBOARD=$6

for t in python3 curl; do
	if ! command -v $t >/dev/null; then
		echo "skipped: $t is needed (scripts/deps.sh)"
		exit 77
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptod-metrics.XXXXXX") || exit 1
chmod 755 "$tmp" # nobody must reach the socket
sock=$tmp/cryptod.sock
dpid=
spid=
apid=
npid=
pass=0
fail=0

cleanup()
{
	exec 8>&- 2>/dev/null
	exec 9>&- 2>/dev/null
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "$apid" ] && kill "$apid" 2>/dev/null
	[ -n "$npid" ] && kill $(pgrep -P "$npid") "$npid" 2>/dev/null
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

start_daemon()
{
	"$DAEMON" --socket "$sock" --socket-mode 0666 --workers 1 --log-level warn \
		2>>"$tmp/daemon.log" &
	dpid=$!
	for _ in $(seq 100); do
		[ -S "$sock" ] && return 0
		sleep 0.05
	done
	echo "FAIL: daemon did not start" >&2
	cat "$tmp/daemon.log" >&2
	exit 1
}

# wait_url FILE: the exporter's start-up line in FILE; sets url (20 s).
wait_url()
{
	for _ in $(seq 400); do
		url=$(sed -n 's|^cryptoctl stats --serve: \(http://.*\)/metrics$|\1|p' "$1" 2>/dev/null)
		[ -n "$url" ] && return 0
		sleep 0.05
	done
	return 1
}

# scrape PATH [CURL ARGS...]: body in $tmp/body, headers in $tmp/head,
# "STATUS CONTENT-TYPE" in $got.
scrape()
{
	local path=$1
	shift
	got=$(curl -sS --max-time 10 -o "$tmp/body" -D "$tmp/head" \
		-w '%{http_code} %{content_type}' "$@" "$url$path" 2>"$tmp/curl.err")
}

# metric NAME LABELMATCH FILE: the value of the first sample of NAME whose
# labels contain LABELMATCH.
metric()
{
	awk -v n="$1" -v m="$2" 'index($0, n "{") == 1 && index($0, m) { print $NF; exit }' "$3"
}

# run_load NAME N: a client with N encrypts (and 1 auth failure, 1 error)
# that holds its queue until its stdin closes, here at once.
run_load()
{
	"$LOAD" "$sock" "$1" "$2" 1 1 256 </dev/null >"$tmp/load.out" 2>&1
}

start_daemon

# ---- usage errors ---------------------------------------------------------
for arg in abc 1.2.3.4:99999 ::1:80 '[::1]' '127.0.0.1:'; do
	"$CTL" --socket "$sock" stats --serve "$arg" >/dev/null 2>"$tmp/err"
	check "--serve '$arg' is a usage error (2)" test $? = 2
done
"$CTL" --socket "$sock" stats --serve --json >/dev/null 2>&1
check "--serve with --json is a usage error" test $? = 2
"$CTL" --socket "$sock" stats --serve --prometheus >/dev/null 2>&1
check "--serve with --prometheus is a usage error" test $? = 2
"$CTL" --socket "$sock" stats --help >"$tmp/help"
check "stats --help documents --serve" grep -q -- '--serve \[\[ADDR:\]PORT\]' "$tmp/help"

# ---- the exporter on an ephemeral port --------------------------------------
"$CTL" --socket "$sock" stats --serve 127.0.0.1:0 >"$tmp/serve.out" \
	2>"$tmp/serve.err" &
spid=$!
check "the exporter says where it listens" wait_url "$tmp/serve.out"
[ -n "$url" ] || { cat "$tmp/serve.err" >&2; exit 1; }
echo "exporter at $url"

run_load obs-metrics 10
scrape /metrics
check "GET /metrics: 200" test "${got%% *}" = 200
check "GET /metrics: Content-Type text/plain; version=0.0.4" \
	sh -c "case '${got#* }' in 'text/plain; version=0.0.4'*) ;; *) exit 1 ;; esac"
check "GET /metrics: Connection: close and a Content-Length" \
	sh -c "grep -qi '^Connection: close' '$tmp/head' && grep -qi '^Content-Length: [0-9]' '$tmp/head'"
cp "$tmp/body" "$tmp/scrape1.prom"
check "the scrape passes the strict checker" \
	python3 "$PROMCHK" "$tmp/scrape1.prom" cryptod_up \
	cryptod_engine_ops_total cryptod_worker_service_seconds \
	cryptod_queue_in_flight cryptod_program_ops_total
check "the scrape says cryptod_up 1" grep -qx 'cryptod_up 1' "$tmp/scrape1.prom"
if command -v promtool >/dev/null; then
	check "promtool check metrics on the scrape" \
		sh -c "promtool check metrics <'$tmp/scrape1.prom'"
else
	echo "skipped: promtool check metrics (promtool not installed: Debian package prometheus, scripts/deps.sh)"
fi

e1=$(metric cryptod_engine_ops_total 'engine="aesni"' "$tmp/scrape1.prom")
p1=$(metric cryptod_program_ops_total 'program="obs-metrics"' "$tmp/scrape1.prom")
run_load obs-metrics 25
scrape /metrics
cp "$tmp/body" "$tmp/scrape2.prom"
e2=$(metric cryptod_engine_ops_total 'engine="aesni"' "$tmp/scrape2.prom")
p2=$(metric cryptod_program_ops_total 'program="obs-metrics"' "$tmp/scrape2.prom")
check "engine ops grew by the 25 encrypts between two scrapes ($e1 -> $e2)" \
	test "$((${e2:-0} - ${e1:-0}))" = 25
check "program ops grew by its 27 ops between two scrapes ($p1 -> $p2)" \
	test "$((${p2:-0} - ${p1:-0}))" = 27

# ---- other requests -------------------------------------------------------
scrape /
check "GET /: 200, HTML pointing at /metrics" \
	sh -c "test '${got%% *}' = 200 && grep -q 'href=\"/metrics\"' '$tmp/body'"
scrape /nope
check "GET /nope: 404" test "${got%% *}" = 404
scrape /metrics/x
check "GET /metrics/x: 404" test "${got%% *}" = 404
scrape '/metrics?name[]=x'
check "GET /metrics?query: 200 (the query is ignored)" test "${got%% *}" = 200
scrape /metrics -X POST -d x=1
check "POST /metrics: 405 with Allow: GET, HEAD" \
	sh -c "test '${got%% *}' = 405 && grep -qi '^Allow: GET, HEAD' '$tmp/head'"
scrape /metrics -I
check "HEAD /metrics: 200, headers only" \
	sh -c "test '${got%% *}' = 200 && grep -q '^Content-Length: [1-9]' '$tmp/body' && ! grep -q '^# HELP' '$tmp/body'"

# raw REQUEST: what the exporter answers to bytes curl would not send.
raw()
{
	python3 - "$url" "$1" <<'EOF'
import socket, sys
host, port = sys.argv[1][len("http://"):].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=10)
req = sys.argv[2].encode().decode("unicode_escape").encode("latin-1")
try:
    s.sendall(req)
    s.shutdown(socket.SHUT_WR)
except OSError:
    pass
data = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
except OSError:
    pass
print(data.split(b"\r\n", 1)[0].decode("latin-1", "replace"))
EOF
}
check "garbage: 400" test "$(raw 'FOO\r\n\r\n')" = "HTTP/1.1 400 Bad Request"
check "HTTP/2.0 request line: 400" \
	test "$(raw 'GET /metrics HTTP/2.0\r\n\r\n')" = "HTTP/1.1 400 Bad Request"
check "a NUL byte: 400" test "$(raw 'GET /\x00 HTTP/1.1\r\n\r\n')" = "HTTP/1.1 400 Bad Request"
check "9000 bytes of header: 431" \
	test "$(raw "GET /metrics HTTP/1.1\\r\\nX: $(head -c 9000 /dev/zero | tr '\0' a)\\r\\n\\r\\n")" = \
	"HTTP/1.1 431 Request Header Fields Too Large"
check "HTTP/1.0 with bare newlines: 200" \
	test "$(raw 'GET /metrics HTTP/1.0\n\n')" = "HTTP/1.1 200 OK"

# ---- slow clients do not block a scrape ------------------------------------
hp=${url#http://}
exec 8<>"/dev/tcp/${hp%:*}/${hp##*:}" # silent: sends nothing
exec 9<>"/dev/tcp/${hp%:*}/${hp##*:}"
printf 'GET /metr' >&9 # slow: half a request line
t0=$(date +%s%N)
scrape /metrics
t1=$(date +%s%N)
check "a scrape beside a silent and a slow connection: 200" test "${got%% *}" = 200
# Answered while both were still open, not after their deadline freed
# the loop: reading the silent one still times out.
timeout 0.2 cat <&8 >/dev/null
check "... answered while they were still open ($(((t1 - t0) / 1000000)) ms)" test $? = 124
# The silent one is closed at its deadline (5 s from its connect).
timeout 20 cat <&8 >/dev/null
t2=$(date +%s%N)
ms=$(((t2 - t0) / 1000000))
check "a silent connection is closed at its deadline (after $ms ms, 5000 expected)" \
	test "$ms" -ge 3000 -a "$ms" -lt 15000
exec 8>&- 9>&-

# ---- the daemon goes away and comes back -----------------------------------
kill "$dpid"
wait "$dpid" 2>/dev/null
dpid=
scrape /metrics
check "daemon stopped: 503" test "${got%% *}" = 503
check "503: the reason and cryptod_up 0" \
	sh -c "grep -q '^# cryptod did not answer: cannot connect to $sock' '$tmp/body' && grep -qx 'cryptod_up 0' '$tmp/body'"
check "503 body passes the strict checker" python3 "$PROMCHK" "$tmp/body" cryptod_up
scrape /metrics
check "still 503 on the next scrape" test "${got%% *}" = 503
check "the exporter logs the loss once" \
	test "$(grep -c 'cryptod did not answer' "$tmp/serve.err")" = 1
start_daemon
scrape /metrics
check "daemon back: 200" test "${got%% *}" = 200
check "daemon back: cryptod_up 1" grep -qx 'cryptod_up 1' "$tmp/body"
check "the exporter logs the return" grep -q "cryptod answers at $sock" "$tmp/serve.err"
cp "$tmp/body" "$tmp/scrape3.prom"

# ---- the Grafana dashboard against a real scrape ---------------------------
check "every metric the dashboard queries is in the scrape" \
	python3 "$DASHCHK" "$DASHBOARD" "$tmp/scrape3.prom" "$tmp/dash-rules.yml"
if command -v promtool >/dev/null; then
	check "promtool parses every query of the dashboard" \
		sh -c "promtool check rules '$tmp/dash-rules.yml' >'$tmp/rules.log' 2>&1" ||
		cat "$tmp/rules.log" >&2
	printf '{"groups":[{"name":"x","rules":[{"record":"a:b","expr":"sum(rate(x[5m])"}]}]}\n' \
		>"$tmp/bad-rules.yml"
	check "promtool check rules rejects a broken query" \
		sh -c "! promtool check rules '$tmp/bad-rules.yml' >/dev/null 2>&1"
else
	echo "skipped: promtool check rules on the dashboard (promtool not installed)"
fi
sed 's/cryptod_engine_ops_total/cryptod_engine_opz_total/' "$DASHBOARD" >"$tmp/drift.json"
check "the check catches a dashboard that drifted" \
	sh -c "! python3 '$DASHCHK' '$tmp/drift.json' '$tmp/scrape3.prom' >/dev/null"

kill -TERM "$spid"
wait "$spid"
check "SIGTERM: the exporter exits 0" test $? = 0
spid=

# ---- run as a user the daemon shows only its own connection ---------------
# obs_load --as-nobody runs it in a child of its own, which is the one to
# stop.
"$LOAD" --as-nobody "$CTL" --socket "$sock" stats --serve 127.0.0.1:0 \
	>"$tmp/nobody.out" 2>"$tmp/nobody.err" &
npid=$!
check "as nobody: the exporter starts" wait_url "$tmp/nobody.out"
scrape /metrics
check "as nobody: 200, and no worker series (the daemon hides them)" \
	sh -c "test '${got%% *}' = 200 && ! grep -q '^cryptod_worker_ops_total{' '$tmp/body'"
scrape /metrics
check "as nobody: it says once why the figures are its own only" \
	test "$(grep -c 'only its own connection.s figures: run the exporter as root or as cryptod.s user' "$tmp/nobody.err")" = 1
check "as root it did not say so" sh -c "! grep -q 'only its own' '$tmp/serve.err'"
kill -TERM $(pgrep -P "$npid") 2>/dev/null
wait "$npid"
check "as nobody: SIGTERM, exit 0" test $? = 0
npid=

# ---- sockets passed by systemd (LISTEN_FDS) -------------------------------
# A launcher binds an ephemeral port, puts it at descriptor 3 and execs
# cryptoctl in its own process, as systemd does. It replaces the shell it
# runs in (run it in a subshell), so that $! is cryptoctl's pid.
activate()
{
	exec python3 - "$tmp/act.port" "$@" <<'EOF'
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ["LISTEN_PID"] = str(os.getpid())
os.environ["LISTEN_FDS"] = "1"
os.execv(sys.argv[2], sys.argv[2:])
EOF
}
(activate "$CTL" --socket "$sock" stats --serve) >"$tmp/act.out" 2>"$tmp/act.err" &
apid=$!
check "socket activation: the exporter names the passed socket" wait_url "$tmp/act.out" ||
	cat "$tmp/act.err" >&2
check "socket activation: it is the one systemd bound" \
	test "$url" = "http://127.0.0.1:$(cat "$tmp/act.port")"
scrape /metrics
check "socket activation: GET /metrics 200" test "${got%% *}" = 200
kill -TERM "$apid"
wait "$apid"
check "socket activation: SIGTERM, exit 0" test $? = 0
apid=
(activate "$CTL" --socket "$sock" stats --serve 127.0.0.1:0) >/dev/null 2>&1
check "socket activation with an address too: usage error (2)" test $? = 2

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
