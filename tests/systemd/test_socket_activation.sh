#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Socket activation with systemd's own tool: systemd-socket-activate binds
# a SOCK_SEQPACKET socket and starts cryptod on the first connection,
# passing the listener as fd 3 ($LISTEN_FDS), as cryptod.socket does.
# A client (cryptoctl) connects through it and checks a NIST GCM vector.
#
#   test_socket_activation.sh CRYPTOD CRYPTOCTL
#
# Exit 0 when every check passed, 1 otherwise, 77 when
# systemd-socket-activate is missing.
set -u

DAEMON=$1
CTL=$2
VEC=/usr/lib/python3/dist-packages/cryptography_vectors/ciphers/AES/GCM/gcmEncryptExtIV128.rsp

if ! command -v systemd-socket-activate >/dev/null; then
	echo "skipped: systemd-socket-activate not found (Debian package systemd)"
	exit 77
fi
if [ ! -r "$VEC" ]; then
	echo "skipped: $VEC missing (python3-cryptography-vectors)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptod-sa.XXXXXX") || exit 1
pids=()
pass=0
fail=0
cleanup()
{
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
ok() { pass=$((pass + 1)); }
bad()
{
	fail=$((fail + 1))
	echo "FAIL: $*" >&2
}

VECTOR=$(dirname "$0")/../common/nist_gcm_vector.sh
read -r KEY IV PT AAD CT TAG < <(sh "$VECTOR")
if [ -z "${TAG:-}" ]; then
	echo "FAIL: no NIST GCM vector" >&2
	exit 1
fi

# wait_for FILE PATTERN: up to 30 s (sanitizer builds start slowly).
wait_for()
{
	for _ in $(seq 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

gcm_check() # SOCKET LABEL
{
	local out
	out=$(printf '%s' "$PT" | xxd -r -p |
		CRYPTOD_SOCKET=$1 timeout 30 "$CTL" encrypt -a aes-128-gcm -k "$KEY" \
			-i "$IV" --aad "$AAD" | xxd -p | tr -d '\n')
	if [ "$out" = "$CT$TAG" ]; then
		ok
	else
		bad "$2: NIST GCM vector: got '$out', want '$CT$TAG'"
	fi
}

# 1. A SOCK_SEQPACKET listener: served, and the file left to the manager.
sock=$tmp/activated.sock
systemd-socket-activate --seqpacket -l "$sock" --fdname=cryptod.socket \
	"$DAEMON" --workers 1 --socket "$tmp/ignored.sock" >"$tmp/log1" 2>&1 &
apid=$!
pids+=("$apid")
wait_for "$tmp/log1" "Listening on" || bad "systemd-socket-activate did not listen"
gcm_check "$sock" "socket-activated"
if grep -q "socket activation: serving $sock (fd 3, cryptod.socket)" "$tmp/log1"; then
	ok
else
	bad "the daemon did not say it serves the inherited socket"
fi
[ ! -e "$tmp/ignored.sock" ] && ok || bad "--socket was bound despite socket activation"
CRYPTOD_SOCKET=$sock timeout 30 "$CTL" stats >/dev/null && ok ||
	bad "second client through the activated socket"
kill -TERM "$apid"
wait "$apid"
st=$?
[ "$st" -eq 0 ] && ok || bad "exit status $st after SIGTERM"
grep -q "stopped" "$tmp/log1" && ok || bad "no clean stop"
# systemd owns the socket file: the daemon must not unlink it, or the
# next activation could never happen.
[ -S "$sock" ] && ok || bad "the daemon removed the manager's socket file"

# 2. A stream listener (ListenStream= by mistake) is refused, loudly.
sock2=$tmp/stream.sock
systemd-socket-activate -l "$sock2" "$DAEMON" --workers 1 >"$tmp/log2" 2>&1 &
apid=$!
pids+=("$apid")
wait_for "$tmp/log2" "Listening on" || bad "systemd-socket-activate (stream) did not listen"
# Any connection attempt starts the daemon; a seqpacket client cannot
# connect to a stream socket, so poke it with a stream connection.
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$sock2" 2>/dev/null
wait "$apid"
st=$?
[ "$st" -ne 0 ] && ok || bad "the daemon served a stream socket (exit $st)"
grep -q "not a listening AF_UNIX SOCK_SEQPACKET socket" "$tmp/log2" && ok ||
	{ bad "no clear error for a stream socket:"; cat "$tmp/log2" >&2; }

# 3. $LISTEN_PID naming another process: ignored, the daemon binds its own.
own=$tmp/own.sock
LISTEN_FDS=1 LISTEN_PID=1 "$DAEMON" --workers 1 --socket "$own" >"$tmp/log3" 2>&1 &
dpid=$!
pids+=("$dpid")
wait_for "$tmp/log3" "listening on $own" || bad "daemon did not bind its own socket"
gcm_check "$own" "LISTEN_PID for another process"
kill -TERM "$dpid"
wait "$dpid"
[ $? -eq 0 ] && ok || bad "exit status after SIGTERM (own socket)"
[ ! -e "$own" ] && ok || bad "the daemon left its own socket file behind"

# 4. A user's client finds the system service's socket by default. In a
# private mount namespace with its own /run (nothing on the host changes):
# a socket-activated daemon on /run/cryptod/cryptod.sock, and cryptoctl
# run as nobody with no $CRYPTOD_SOCKET.
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && command -v setpriv >/dev/null &&
	unshare -m true 2>/dev/null; then
	cat >"$tmp/ns.sh" <<'NS'
set -u
mount -t tmpfs -o mode=0755 none /run || exit 77
mkdir -p /run/cryptod
systemd-socket-activate --seqpacket -l /run/cryptod/cryptod.sock "$1" --workers 1 >"$3" 2>&1 &
apid=$!
for _ in $(seq 100); do [ -S /run/cryptod/cryptod.sock ] && break; sleep 0.1; done
chmod 0666 /run/cryptod/cryptod.sock  # cryptod.socket: 0660, group cryptod
as_user() { env -u CRYPTOD_SOCKET XDG_RUNTIME_DIR=/nonexistent \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
rc=0
as_user "$2" ping >/dev/null || { echo "FAIL: a user's cryptoctl did not find /run/cryptod/cryptod.sock" >&2; rc=1; }
kill -TERM "$apid"; wait "$apid"
rm -f /run/cryptod/cryptod.sock
# Without the system socket the user's default is per user again.
out=$(as_user "$2" ping 2>&1) && { echo "FAIL: ping succeeded with no daemon" >&2; rc=1; }
case "$out" in *"/nonexistent/cryptod.sock"*) ;; *) echo "FAIL: no fallback to \$XDG_RUNTIME_DIR: $out" >&2; rc=1 ;; esac
exit $rc
NS
	unshare -m bash "$tmp/ns.sh" "$DAEMON" "$CTL" "$tmp/log4"
	case $? in
	0) ok ;;
	77) echo "(client default path: no tmpfs on /run here; not checked)" ;;
	*) bad "client default path (log: $(tail -3 "$tmp/log4" | tr '\n' ' '))" ;;
	esac
fi

echo "socket activation: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
