#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# When the daemon goes away, and when its socket is not ours to use:
# stats --watch waits for a restarted daemon and goes on; a command the
# daemon dies under says what happened (not "Broken pipe"), exit 1; a
# permission error names the socket's (or its directory's) real owner,
# group and mode, the group to join only when there is one, and the
# settings that set them.
#
#   test_cryptoctl_loss.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]   (cryptoctl_lib.sh)
set -u
. "$(dirname "$0")/cryptoctl_lib.sh"

LOST='cryptod closed the connection: it stopped or restarted'

# until_grep PATTERN FILE: wait up to 20 s for PATTERN in FILE (a busy
# machine starts a program late; fixed sleeps would race it).
until_grep()
{
	for _ in $(seq 200); do
		grep -q -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# until_clients N: wait up to 20 s until the daemon has N connections
# (this check's own among them).
until_clients()
{
	for _ in $(seq 200); do
		[ "$("$CTL" clients --json 2>/dev/null |
			python3 -c 'import json,sys; print(len(json.load(sys.stdin)["clients"]))')" \
			-ge "$1" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# kill_daemon: SIGKILL, as a crash or an OOM kill would stop it.
kill_daemon()
{
	kill -KILL "$dpid"
	wait "$dpid" 2>/dev/null
	dpid=
}

# ---------------------------------------------------------------------------
section "stats --watch across a daemon restart"
"$CTL" stats --watch 0.2 --count 12 >"$tmp/watch.out" 2>"$tmp/watch.err" &
wpid=$!
check "watch: snapshot 2 shown" until_grep '^--- snapshot 2$' "$tmp/watch.out"
kill_daemon
check "watch: says the daemon went and that it waits" \
	until_grep "^cryptoctl: stats: $LOST; waiting for it to come back" "$tmp/watch.err"
sleep 1
check "watch: still running while the daemon is gone" kill -0 "$wpid"
daemon_start
wait "$wpid"
wrc=$?
check "watch: exit 0 after its 12 snapshots (got $wrc)" test "$wrc" -eq 0
check "watch: snapshot 12 shown" grep -qx -- '--- snapshot 12' "$tmp/watch.out"
check "watch: says it is connected again" \
	grep -q "^cryptoctl: stats: connected to $sock again$" "$tmp/watch.err"
check "watch: the message once, no Broken pipe" \
	test "$(grep -c waiting "$tmp/watch.err")" -eq 1 -a \
	"$(grep -c 'Broken pipe' "$tmp/watch.err")" -eq 0
# --json: stdout stays one object a line; the news goes to stderr.
"$CTL" stats --watch 0.2 --count 6 --json >"$tmp/watch.out" 2>"$tmp/watch.err" &
wpid=$!
until_grep '"snapshot": 2' "$tmp/watch.out"
kill_daemon
until_grep "$LOST" "$tmp/watch.err"
daemon_start
wait "$wpid"
wrc=$?
check "watch --json across a restart: exit 0, six JSON lines" python3 - "$tmp/watch.out" "$wrc" <<'PY'
import json, sys
assert sys.argv[2] == "0", sys.argv[2]
objs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
assert [o["snapshot"] for o in objs] == [1, 2, 3, 4, 5, 6], objs
PY
check "watch --json: the loss on stderr" grep -q "$LOST" "$tmp/watch.err"
# Quitting while it waits: SIGTERM ends it at once.
"$CTL" stats --watch 0.2 >/dev/null 2>"$tmp/watch.err" &
wpid=$!
until_clients 2
kill_daemon
until_grep "$LOST" "$tmp/watch.err"
kill -TERM "$wpid"
for _ in $(seq 30); do kill -0 "$wpid" 2>/dev/null || break; sleep 0.1; done
check "watch: SIGTERM while it waits ends it" sh -c "! kill -0 $wpid 2>/dev/null"
wait "$wpid" 2>/dev/null
daemon_start

# ---------------------------------------------------------------------------
section "a command the daemon dies under"
# A stream from a pipe: 8 MiB, a pause in which the daemon dies, more.
(
	head -c 8M /dev/zero
	sleep 3
	head -c 8M /dev/zero
) | "$CTL" encrypt -k "$K16" -i "$IV12" >/dev/null 2>"$err" &
epid=$!
until_clients 2
sleep 0.5 # its first megabytes through
kill_daemon
wait "$epid"
erc=$?
check "encrypt: exit 1 (got $erc)" test "$erc" -eq 1
check "encrypt: says what happened" grep -q "^cryptoctl: encrypt: $LOST" "$err"
check "encrypt: no Broken pipe" sh -c "! grep -q 'Broken pipe' '$err'"
daemon_start
# One connected, its stream open, waiting for its first input.
(
	sleep 3
	head -c 1M /dev/zero
) | "$CTL" digest >/dev/null 2>"$tmp/dg.err" &
digest_pid=$!
until_clients 2
kill_daemon
wait "$digest_pid"
drc=$?
check "digest: exit 1 (got $drc)" test "$drc" -eq 1
check "digest: says what happened" grep -q "$LOST" "$tmp/dg.err"
daemon_start

# ---------------------------------------------------------------------------
section "a permission error names the real owner, group and mode"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	# $tmp is 0700: nobody cannot reach the socket in it.
	asnobody "$CTL" --socket "$sock" ping >"$out" 2>"$err"
	rc=$?
	check "directory: exit 1" test "$rc" -eq 1
	check "directory: names it, root:root mode 0700, root only" \
		grep -q "Permission denied - $tmp is root:root mode 0700, for root only" "$err"
	check "directory: no group to join" sh -c "! grep -q usermod '$err'"
	check "directory: one line" test "$(lines "$err")" -eq 1

	# A second daemon whose socket nobody can reach but not open.
	pub=$(mktemp -d /tmp/cryptoctl-pub.XXXXXX)
	chmod 0755 "$pub"
	"$DAEMON" --socket "$pub/s.sock" --socket-mode 0600 --workers 1 \
		>"$tmp/d2.log" 2>&1 &
	d2=$!
	for _ in $(seq 100); do [ -S "$pub/s.sock" ] && break; sleep 0.1; done
	asnobody "$CTL" --socket "$pub/s.sock" ping >"$out" 2>"$err"
	check "socket 0600 root:root: names owner, group, mode" \
		grep -q "Permission denied - the socket is root:root mode 0600, for root only" "$err"
	check "  ... and the settings that set them" \
		grep -q "socket_mode and socket_group in cryptod.conf(5) set its mode and group, its owner is the user cryptod runs as; under socket activation SocketUser=, SocketGroup=, SocketMode= in cryptod.socket" "$err"
	check "  ... and no cryptod group that may not exist" sh -c "! grep -q usermod '$err'"
	kill -TERM "$d2"
	wait "$d2" 2>/dev/null

	# A group that may connect: the hint names it.
	grp=$(getent group adm | cut -d: -f1)
	if [ -n "$grp" ]; then
		"$DAEMON" --socket "$pub/s.sock" --socket-mode 0660 \
			--socket-group "$grp" --workers 1 >"$tmp/d2.log" 2>&1 &
		d2=$!
		for _ in $(seq 100); do [ -S "$pub/s.sock" ] && break; sleep 0.1; done
		asnobody "$CTL" --socket "$pub/s.sock" ping >"$out" 2>"$err"
		check "socket 0660 root:$grp: the group to join is $grp" \
			grep -q "the socket is root:$grp mode 0660: 'sudo usermod -aG $grp \$USER', then log in again" "$err"
		kill -TERM "$d2"
		wait "$d2" 2>/dev/null
	fi
	rm -rf "$pub"
else
	echo "skipped: the permission hints (need root and setpriv)"
fi

finish test_cryptoctl_loss
