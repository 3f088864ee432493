#!/bin/bash
# shellcheck disable=SC2034 # the checks read variables through eval (check)
# The checks of the systemd boot test, run in the booted guest by
# cryptod-boottest.service (tests/boot/run-boot.sh puts both there) with
# systemd as PID 1 and the .debs installed. One line per check on stdout
# (the serial console): "BOOTTEST PASS name" or "BOOTTEST FAIL name: why",
# then "BOOTTEST DONE". Order matters: the first check must be the first
# connection to the socket.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
CONF=/etc/cryptod/cryptod.conf
SOCK=/run/cryptod/cryptod.sock
T0=$(date +%s)
cp "$CONF" /run/good.conf

pass() { echo "BOOTTEST PASS $1 ($(($(date +%s) - T0)) s)"; }
fail() { echo "BOOTTEST FAIL $1: $2"; }
# check NAME COND WHY: PASS if the shell condition COND holds; else FAIL
# with WHY, both evaluated then (single-quote them)
check() {
	local why
	if eval "$2"; then
		pass "$1"
	else
		# a here-document expands $(...) and $var but leaves quotes alone
		why=$(eval "cat <<WHY_END
$3
WHY_END
")
		fail "$1" "$why"
	fi
}
prop() { systemctl show -p "$2" --value "$1"; }
mainpid() { prop cryptod.service MainPID; }
# wait_for SECONDS command...: until the command succeeds
wait_for() {
	local n=$(($1 * 2))
	shift
	while ! "$@"; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.5
	done
}
active() { [ "$(prop cryptod.service ActiveState)" = active ]; }
restarted_from() { # old pid: active again under another pid
	local p
	p=$(mainpid)
	active && [ "$p" != 0 ] && [ "$p" != "$1" ]
}
ping() { timeout 20 cryptoctl ping >/dev/null 2>&1; }
journal() { journalctl -b -u cryptod.service --no-pager -o cat "$@" 2>/dev/null; }

systemctl is-system-running --wait >/dev/null 2>&1
check pid1 '[ "$(cat /proc/1/comm)" = systemd ]' 'PID 1 is $(cat /proc/1/comm), not systemd'
echo "BOOTTEST INFO $(systemctl --version | head -1), kernel $(uname -r), system $(systemctl is-system-running)"

# --- the package's postinst: user, group, socket enabled, service not started
check sysusers 'getent passwd cryptod >/dev/null && getent group cryptod >/dev/null' 'no user or group cryptod'
check socket-enabled '[ "$(systemctl is-enabled cryptod.socket 2>&1)" = enabled ]' \
	'cryptod.socket is $(systemctl is-enabled cryptod.socket 2>&1)'
check socket-listening '[ "$(prop cryptod.socket ActiveState)" = active ] && [ "$(stat -c "%a %G %F" $SOCK)" = "660 cryptod socket" ]' \
	'cryptod.socket is $(prop cryptod.socket ActiveState), $SOCK: $(stat -c "%a %G %F" $SOCK 2>&1)'
check not-started '[ "$(prop cryptod.service ActiveState)" = inactive ]' \
	'cryptod.service is $(prop cryptod.service ActiveState) before any client'

# --- socket activation on the first connection; Type=notify readiness
check socket-activation 'ping' 'cryptoctl ping: $(cryptoctl ping 2>&1 | head -2)'
st=$(prop cryptod.service StatusText)
echo "BOOTTEST INFO status: $st"
check notify-ready '[ "$(prop cryptod.service Type)" = notify ] && active && [ "$(prop cryptod.service SubState)" = running ] && [[ $st == serving* ]]' \
	'Type=$(prop cryptod.service Type) $(prop cryptod.service ActiveState)/$(prop cryptod.service SubState), status "$st"'
check runs-as-cryptod '[ "$(ps -o user= -p "$(mainpid)")" = cryptod ]' 'the daemon runs as $(ps -o user= -p "$(mainpid)")'

# --- group access: a member connects, a non-member is refused
useradd -M -G cryptod alice && useradd -M bob
check group-member 'runuser -u alice -- timeout 20 cryptoctl ping >/dev/null 2>&1' \
	'alice (group cryptod): $(runuser -u alice -- cryptoctl ping 2>&1 | head -1)'
out=$(runuser -u bob -- timeout 20 cryptoctl ping 2>&1)
rc=$?
check group-nonmember '[ $rc = 1 ] && [[ $out == *"ermission denied"* ]]' 'bob (not in cryptod): exit $rc, "$out"'

# --- the OpenSSL provider from its package, with the packaged example
# configuration, as a member of group cryptod: SHA-256("abc") (FIPS 180-2)
cnf=/usr/share/cryptod/cryptod-provider.cnf
dg=$(printf abc | runuser -u alice -- env OPENSSL_CONF=$cnf timeout 20 openssl dgst -sha256 -propquery provider=cryptod 2>&1)
check openssl-provider '[[ $dg == *ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad ]]' \
	'openssl dgst through the provider: $dg'

# --- the Prometheus exporter: installed off; once enabled, the first
# scrape starts it as user cryptod, which the daemon shows everything
# (worker series, other users' programs), with the keys' directory
# inaccessible to it. No curl in the image: bash's /dev/tcp.
metrics_get() {
	timeout 20 bash -c 'exec 3<>/dev/tcp/127.0.0.1/9464 &&
		printf "GET %s HTTP/1.0\r\n\r\n" "$1" >&3 && cat <&3' _ "$1" 2>&1
}
check metrics-off '[ "$(systemctl is-enabled cryptod-metrics.socket 2>&1)" = disabled ] && [ "$(prop cryptod-metrics.socket ActiveState)" = inactive ]' \
	'cryptod-metrics.socket is $(systemctl is-enabled cryptod-metrics.socket 2>&1), $(prop cryptod-metrics.socket ActiveState)'
systemctl enable --now cryptod-metrics.socket >/dev/null 2>&1
m=$(metrics_get /metrics)
check metrics-scrape '[[ $m == "HTTP/1.1 200 OK"* ]] && grep -q "^cryptod_up 1" <<<"$m" && grep -q "^cryptod_worker_ops_total{" <<<"$m" && grep -q "^cryptod_program_ops_total{program=\"openssl/" <<<"$m"' \
	'GET /metrics: $(head -c 400 <<<"$m")'
mpid=$(prop cryptod-metrics.service MainPID)
check metrics-user '[ "$(ps -o user= -p "$mpid")" = cryptod ]' 'the exporter runs as $(ps -o user= -p "$mpid")'
check metrics-no-keys '[ "$(stat -c %a /proc/$mpid/root/var/lib/cryptod 2>&1)" = 0 ]' \
	'/var/lib/cryptod in its namespace: $(stat -c "%a %U" /proc/$mpid/root/var/lib/cryptod 2>&1)'
check metrics-404 '[[ $(metrics_get /nope) == "HTTP/1.1 404"* ]]' 'GET /nope: $(metrics_get /nope | head -1)'
exp=$(systemd-analyze security --no-pager cryptod-metrics.service 2>&1 |
	sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "BOOTTEST INFO systemd-analyze security cryptod-metrics.service: $exp"
systemctl disable --now cryptod-metrics.socket >/dev/null 2>&1
systemctl stop cryptod-metrics.service

# --- the kernel engine (AF_ALG) under the hardened unit: NIST SP 800-38A
# F.2.1, AES-128-CBC, routed to the kernel engine
check kernel-engine-probed 'journal | grep -q "engine kernel available"' '$(journal | grep "engine kernel" | head -1)'
echo "route.aes-cbc = kernel" >>"$CONF"
systemctl reload cryptod.service
ct=$(printf '\x6b\xc1\xbe\xe2\x2e\x40\x9f\x96\xe9\x3d\x7e\x11\x73\x93\x17\x2a' |
	timeout 20 cryptoctl encrypt -a aes-cbc -k 2b7e151628aed2a6abf7158809cf4f3c \
		-i 000102030405060708090a0b0c0d0e0f 2>&1 | od -An -tx1 | tr -d ' \n')
kops=$(cryptoctl stats 2>/dev/null | awk '$1 == "kernel" { print $2; exit }')
check kernel-engine '[ "$ct" = 7649abac8119b246cee98e9b12e9197d ] && [ "${kops:-0}" -ge 1 ]' \
	'ciphertext $ct, kernel engine ops "$kops"'
cp /run/good.conf "$CONF"
systemctl reload cryptod.service

# --- reload: a good file applies, a broken one fails the reload and the
# daemon keeps running with its configuration
pid=$(mainpid)
echo "log_level = debug" >>"$CONF"
check reload-good 'systemctl reload cryptod.service && [ "$(mainpid)" = "$pid" ] && active && ping' \
	'reload failed or the daemon changed: pid $pid -> $(mainpid), $(prop cryptod.service ActiveState)'
{ cat /run/good.conf; echo "workers = abc"; } >"$CONF"
systemctl reload cryptod.service >/dev/null 2>&1
rc=$?
check reload-broken '[ $rc != 0 ] && active && [ "$(mainpid)" = "$pid" ] && ping' \
	'reload exit $rc, $(prop cryptod.service ActiveState), pid $pid -> $(mainpid)'
cp /run/good.conf "$CONF"

# --- systemd-analyze security of the loaded unit
exp=$(systemd-analyze security --no-pager cryptod.service 2>&1 |
	sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "BOOTTEST INFO systemd-analyze security cryptod.service: $exp"
check security 'awk -v e="${exp:-99}" "BEGIN { exit !(e <= 2.0) }"' 'exposure "$exp" above 2.0'

# --- restart after a crash
for sig in SEGV KILL; do
	pid=$(mainpid)
	n=$(prop cryptod.service NRestarts)
	kill -$sig "$pid"
	check crash-$sig 'wait_for 20 restarted_from "$pid" && ping' \
		'not restarted: $(prop cryptod.service ActiveState), pid $pid -> $(mainpid)'
	check crash-$sig-counted '[ "$(prop cryptod.service NRestarts)" = $((n + 1)) ]' \
		'NRestarts $n -> $(prop cryptod.service NRestarts)'
done

# --- watchdog: a stopped daemon (SIGSTOP) misses its pings and is
# restarted. A runtime drop-in shortens WatchdogSec=10s to 2 s.
mkdir -p /run/systemd/system/cryptod.service.d
printf '[Service]\nWatchdogSec=2s\n' >/run/systemd/system/cryptod.service.d/watchdog.conf
systemctl daemon-reload
systemctl restart cryptod.service
pid=$(mainpid)
kill -STOP "$pid"
check watchdog 'wait_for 45 restarted_from "$pid" && ping' \
	'not restarted: $(prop cryptod.service ActiveState), pid $pid -> $(mainpid)'
check watchdog-logged 'journalctl -b -u cryptod.service --no-pager | grep -q "Watchdog timeout"' \
	'no "Watchdog timeout" in the journal'
rm -rf /run/systemd/system/cryptod.service.d
systemctl daemon-reload

# --- a broken configuration at start: one failed start, no restart loop,
# the socket stays; fixing the file and one command bring it back
{ cat /run/good.conf; echo "workers = abc"; } >"$CONF"
systemctl restart cryptod.service >/dev/null 2>&1
rc=$?
n=$(prop cryptod.service NRestarts)
sleep 3
check broken-start '[ $rc != 0 ] && [ "$(prop cryptod.service ActiveState)" = failed ] && [ "$(prop cryptod.service ExecMainStatus)" = 78 ]' \
	'restart exit $rc, $(prop cryptod.service ActiveState), status $(prop cryptod.service ExecMainStatus)'
check broken-no-retry '[ "$(prop cryptod.service NRestarts)" = "$n" ]' 'NRestarts $n -> $(prop cryptod.service NRestarts)'
# clients keep connecting: each gets an error at once, the socket survives
t=$(date +%s)
ok=0
for i in 1 2 3 4; do
	ping && ok=$((ok + 1))
done
check broken-clients-refused '[ $ok = 0 ] && [ $(($(date +%s) - t)) -lt 30 ]' \
	'$ok pings answered, 4 took $(($(date +%s) - t)) s'
check broken-socket-survives '[ "$(prop cryptod.socket ActiveState)" = active ] && [ -S $SOCK ]' \
	'cryptod.socket $(prop cryptod.socket ActiveState) ($(prop cryptod.socket Result)), $SOCK $(stat -c %F $SOCK 2>&1)'
check broken-no-loop '[ "$(prop cryptod.service NRestarts)" = "$n" ]' 'NRestarts $n -> $(prop cryptod.service NRestarts)'
check broken-logged-err 'journal -p err | grep -q "workers"' 'the reason is not in "journalctl -p err": $(journal -p err | tail -2)'
echo "BOOTTEST INFO journalctl -u cryptod -p err: $(journal -p err | grep workers | tail -1)"
cp /run/good.conf "$CONF"
check broken-fixed 'systemctl restart cryptod.service && active && ping' \
	'after the fix, systemctl restart cryptod: $(prop cryptod.service ActiveState)'

# --- journal priorities: the start-up line is info, not warning
check journal-info 'journal -p info | grep -q "listening on"' 'no "listening on" at priority info'
check journal-priorities '! journal -p warning | grep -q "listening on"' '"listening on" shows at priority warning'

# --- systemctl stop: a clean exit, no process left, the socket stays
# until it is stopped too, and then its file is gone
systemctl stop cryptod.service 2>/dev/null # (its warning: the socket can still start it)
check stop-clean '[ "$(prop cryptod.service ActiveState)" = inactive ] && [ "$(prop cryptod.service Result)" = success ] && [ "$(prop cryptod.service ExecMainStatus)" = 0 ] && ! pgrep -x cryptod >/dev/null' \
	'$(prop cryptod.service ActiveState), result $(prop cryptod.service Result), status $(prop cryptod.service ExecMainStatus), left: $(pgrep -x cryptod)'
check stop-logged 'journal | tail -5 | grep -q "^stopped"' 'no "stopped" line: $(journal | tail -2)'
check stop-socket-stays '[ -S $SOCK ] && [ "$(prop cryptod.socket ActiveState)" = active ]' 'cryptod.socket $(prop cryptod.socket ActiveState)'
systemctl stop cryptod.socket
check stop-socket-removed '[ ! -e $SOCK ]' '$SOCK still there'

echo "BOOTTEST INFO checks took $(($(date +%s) - T0)) s"
echo "BOOTTEST DONE"
