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

# The first vector of [Keylen = 128] [IVlen = 96] [PTlen = 128]
# [AADlen = 128] [Taglen = 128].
read -r KEY IV PT AAD CT TAG < <(tr -d '\r' <"$VEC" | awk '
	/^\[/ { sec = sec $0; if ($0 ~ /Taglen/) { want = (sec ~ /PTlen = 128\]/ && sec ~ /AADlen = 128\]/ && sec ~ /Taglen = 128\]/); sec = "" } next }
	want && /^Count = 0$/ { grab = 1; next }
	grab && /^(Key|IV|PT|AAD|CT|Tag) = / { v[$1] = $3 }
	grab && /^Tag = / { print v["Key"], v["IV"], v["PT"], v["AAD"], v["CT"], v["Tag"]; exit }')
if [ -z "${TAG:-}" ]; then
	echo "FAIL: no vector found in $VEC" >&2
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

echo "socket activation: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
