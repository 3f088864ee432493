#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptod without systemd (docs/without-systemd.md): started as root with
# --user nobody on a temporary run directory, it
#   - creates the socket's directory 0755 root:root whatever the umask
#     (as tmpfiles.d does for /run/cryptod), binds the socket 0660
#     root:<nobody's group> (as cryptod.socket does with group cryptod),
#   - then runs as nobody: real, effective, saved and filesystem uid and
#     gid in /proc/PID/status, no supplementary groups,
#   - locks its key store when root may raise RLIMIT_MEMLOCK, else says
#     why it cannot,
#   - serves clients: root's and one in the socket's group encrypt and
#     decrypt,
#   - stops on SIGTERM with status 0.
# And the refusals: an unknown --user (a clear line, exit 78, no socket),
# --user of another user when not root (exit 78), and a warning when root
# runs it without --user.
#
# Then debian/cryptod.init (its paths pointed at this test's) starts,
# reports and stops the daemon as user nobody.
#
#   test_without_systemd.sh CRYPTOD CRYPTOCTL INIT_SCRIPT
#
# Exit 0 when every check passed, 1 otherwise, 77 when not root or
# without user nobody or runuser.
set -u

DAEMON=$1
CTL=$2
INIT=$3

[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "skipped: no user nobody"; exit 77; }
command -v runuser >/dev/null || { echo "skipped: runuser missing"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptod-nosd.XXXXXX") || exit 1
# nobody (the client in the socket's group) must reach the socket
chmod 0711 "$tmp"
dpid=
cleanup()
{
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
pass=0
fail=0
check()
{
	local desc=$1
	shift
	if "$@" >/dev/null 2>&1; then
		pass=$((pass + 1))
		echo "ok: $desc"
	else
		fail=$((fail + 1))
		echo "FAIL: $desc"
	fi
}

NUID=$(id -u nobody)
NGID=$(id -g nobody)
NGROUP=$(id -gn nobody)
run=$tmp/run/cryptod # the daemon makes this one, as /run/cryptod
sock=$run/cryptod.sock
mkdir "$tmp/run" && chmod 0711 "$tmp/run"

start() # ARGS...: start cryptod in the background, wait for its socket
{
	(umask 077 && exec "$DAEMON" --no-config --workers 1 "$@") \
		>"$tmp/daemon.log" 2>&1 &
	dpid=$!
	for _ in $(seq 100); do
		CRYPTOD_SOCKET=$sock "$CTL" ping >/dev/null 2>&1 && return 0
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.1
	done
	echo "cryptod did not start:" >&2
	cat "$tmp/daemon.log" >&2
	return 1
}
stop() # the exit status of a SIGTERM'ed daemon
{
	kill -TERM "$dpid"
	wait "$dpid"
	local rc=$?
	dpid=
	return $rc
}
status_ids() # FIELD: the four ids of /proc/PID/status's "FIELD:" line
{
	awk -v f="$1:" '$1 == f { print $2, $3, $4, $5 }' "/proc/$dpid/status"
}

# ---- started as root with --user nobody ----
start --user nobody --socket "$sock" || exit 1
check "Uid: real, effective, saved, fs are nobody's ($NUID)" \
	test "$(status_ids Uid)" = "$NUID $NUID $NUID $NUID"
check "Gid: all four nobody's primary group ($NGID)" \
	test "$(status_ids Gid)" = "$NGID $NGID $NGID $NGID"
check "Groups: none" \
	test -z "$(awk '$1 == "Groups:" { $1 = ""; print }' "/proc/$dpid/status" | tr -d ' \t')"
check "socket directory: root:root 0755 under umask 077" \
	test "$(stat -c '%U:%G %a' "$run")" = "root:root 755"
check "socket: root:$NGROUP 0660" \
	test "$(stat -c '%U:%G %a' "$sock")" = "root:$NGROUP 660"
check "the log says whom it runs as" \
	grep -q "running as user nobody (uid $NUID, gid $NGID), no supplementary groups" "$tmp/daemon.log"
if (ulimit -l $((64 * 1024))) 2>/dev/null; then
	check "key store locked in RAM (RLIMIT_MEMLOCK raised before the drop)" \
		grep -q "key store locked in RAM" "$tmp/daemon.log"
else
	check "no CAP_SYS_RESOURCE here: says it cannot raise RLIMIT_MEMLOCK" \
		grep -q "cannot raise RLIMIT_MEMLOCK to 64 MiB" "$tmp/daemon.log"
fi

K=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
IV=000102030405060708090a0b
head -c 1000 /dev/urandom >"$tmp/pt"
CRYPTOD_SOCKET=$sock "$CTL" encrypt -a aes-256-gcm -k $K -i $IV \
	--in "$tmp/pt" --out "$tmp/ct" 2>"$tmp/err"
check "root's client encrypts (exit 0)" test $? -eq 0
cp "$tmp/ct" "$tmp/ct.nobody" && chmod 0644 "$tmp/ct.nobody"
chmod 0711 "$tmp" && chmod 0644 "$tmp/pt"
out=$(runuser -u nobody -- env CRYPTOD_SOCKET="$sock" "$CTL" decrypt \
	-a aes-256-gcm -k $K -i $IV --in "$tmp/ct.nobody" | od -An -tx1 -v)
check "a client of the socket's group ($NGROUP) decrypts it again" \
	test "$out" = "$(od -An -tx1 -v <"$tmp/pt")"
stop
check "SIGTERM: exit 0" test $? -eq 0

# ---- refusals ----
rm -rf "$run"
"$DAEMON" --no-config --user no-such-user-x --socket "$sock" >"$tmp/out" 2>&1
check "unknown --user: exit 78 (EX_CONFIG)" test $? -eq 78
check "unknown --user: says so" grep -q -- "--user no-such-user-x: no such user" "$tmp/out"
check "unknown --user: no socket made" test ! -e "$sock"
runuser -u nobody -- "$DAEMON" --no-config --user root --socket "$tmp/x.sock" >"$tmp/out" 2>&1
check "not root, --user root: exit 78" test $? -eq 78
check "not root, --user root: says only root can switch" \
	grep -q "only root can become another user" "$tmp/out"

# Started as a system user with no socket: the per-user path, which no
# client of the system service tries, is named in a warning.
userdir=/tmp/cryptod-$NUID
existed=0
[ -e "$userdir" ] && existed=1
runuser -u nobody -- env -u XDG_RUNTIME_DIR -u CRYPTOD_SOCKET timeout -s TERM 2 \
	"$DAEMON" --no-config --workers 1 >"$tmp/out" 2>&1
check "as nobody, no --socket: warns of the per-user path" \
	grep -q "serving the per-user path $userdir/cryptod.sock: clients of the system service" "$tmp/out"
[ "$existed" = 1 ] || rm -rf "$userdir"

# ---- root without --user: served, with a warning ----
start --socket "$sock" || exit 1
check "root without --user: warns, names --user cryptod" \
	grep -q "running as root: start it with --user cryptod" "$tmp/daemon.log"
check "without --user: still root" test "$(status_ids Uid)" = "0 0 0 0"
stop
start --user root --socket "$sock" || exit 1
check "--user root: no warning" sh -c "! grep -q 'running as root' '$tmp/daemon.log'"
stop

# ---- debian/cryptod.init, with this test's paths ----
if [ -r /lib/lsb/init-functions ] && command -v start-stop-daemon >/dev/null; then
	sed -e "s|^DAEMON=.*|DAEMON=$DAEMON|" \
		-e "s|^PIDFILE=.*|PIDFILE=$tmp/cryptod.pid|" \
		-e "s|^LOGFILE=.*|LOGFILE=$tmp/init.log|" \
		-e "s|^CRYPTOD_USER=.*|CRYPTOD_USER=nobody|" \
		-e "s|/etc/default/cryptod|$tmp/default|g" "$INIT" >"$tmp/init"
	echo "CRYPTOD_OPTS=\"--no-config --workers 1 --socket $sock\"" >"$tmp/default"
	sh "$tmp/init" start >"$tmp/out" 2>&1
	check "init start: exit 0" test $? -eq 0
	for _ in $(seq 100); do
		CRYPTOD_SOCKET=$sock "$CTL" ping >/dev/null 2>&1 && break
		sleep 0.1
	done
	dpid=$(cat "$tmp/cryptod.pid" 2>/dev/null)
	check "init start: serves $sock" env CRYPTOD_SOCKET="$sock" "$CTL" ping
	check "init start: runs as nobody" test "$(status_ids Uid)" = "$NUID $NUID $NUID $NUID"
	check "init start: logs to its LOGFILE" grep -q "running as user nobody" "$tmp/init.log"
	sh "$tmp/init" status >/dev/null 2>&1
	check "init status: running (0)" test $? -eq 0
	sh "$tmp/init" start >/dev/null 2>&1
	check "init start again: exit 0, still one daemon" \
		test "$(pgrep -c -f -- "--socket $sock")" -eq 1
	sh "$tmp/init" stop >"$tmp/out" 2>&1
	check "init stop: exit 0" test $? -eq 0
	# gone, or a zombie whoever inherited it has yet to reap
	check "init stop: the daemon is gone" \
		sh -c "[ ! -d /proc/$dpid ] || grep -q '^State:.*Z' /proc/$dpid/status"
	dpid=
	sh "$tmp/init" status >/dev/null 2>&1
	check "init status: not running (3)" test $? -eq 3
else
	echo "skipped: debian/cryptod.init (no lsb-base or start-stop-daemon)"
fi

echo "without systemd: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
