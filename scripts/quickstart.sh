#!/usr/bin/env bash
# Quick start: install, build, start cryptod with its defaults, show it
# serving (a short benchmark through the daemon beside in-process
# intel-ipsec-mb, then `cryptoctl stats`), and stop it again.
#   --keep   leave the daemon running afterwards
set -euo pipefail
cd "$(dirname "$0")/.."
KEEP=0
[ "${1:-}" = "--keep" ] && KEEP=1

scripts/deps.sh
scripts/build.sh -DCRYPTOD_TESTS=OFF

echo
LOG=$(mktemp /tmp/cryptod-quickstart.XXXXXX.log)
echo "== starting build/daemon/cryptod (defaults; its log: $LOG) =="
build/daemon/cryptod 2>"$LOG" &
DPID=$!
stop() { kill -TERM "$DPID" 2>/dev/null && wait "$DPID" || true; }
[ "$KEEP" = 1 ] || trap stop EXIT
for _ in $(seq 100); do
	build/cli/cryptoctl ping >/dev/null 2>&1 && break
	kill -0 "$DPID" 2>/dev/null || { echo "cryptod exited early:" >&2; cat "$LOG" >&2; exit 1; }
	sleep 0.1
done
build/cli/cryptoctl ping

echo
echo "== AES-128-GCM encrypt through the daemon vs in-process intel-ipsec-mb =="
build/cli/cryptoctl bench --rounds 3 --time-ms 200 --sizes 64,1024,16384 --no-kernel

echo
echo "== one-shot encrypt with cryptoctl (NIST GCM test case 2: key 0^128, IV 0^96, one zero block) =="
head -c 16 /dev/zero | build/cli/cryptoctl encrypt -a aes-128-gcm \
	-k 00000000000000000000000000000000 -i 000000000000000000000000 | od -An -tx1 | tr -d ' \n'
echo "   (expected 0388dace60b6a392f328c2b971b2fe78 ab6e47d42cec13bdf53a67b21257bddf)"

echo
echo "== cryptoctl stats =="
build/cli/cryptoctl stats
if [ "$KEEP" = 1 ]; then
	echo
	echo "cryptod (pid $DPID) keeps running; stop it with: kill $DPID"
fi
