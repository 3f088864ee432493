#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Quick start: install the Debian packages, build, start cryptod with its
# defaults, show it serving (a short benchmark through the daemon beside
# the same engine in-process, a published test vector, its counters) and
# stop it again. Build and install output goes to log files and is shown
# only when a step fails.
#   --keep   leave the daemon running afterwards
#
# Environment (for the test, tests/cli/test_quickstart.sh):
#   CRYPTOD_SOCKET            the daemon's socket (default: cryptod's own)
#   QUICKSTART_PREBUILT=DIR   use the binaries built in DIR: no install,
#                             no build
#   QUICKSTART_BENCH_MS=N     each benchmark measurement (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
KEEP=0
[ "${1:-}" = "--keep" ] && KEEP=1
BENCH_MS=${QUICKSTART_BENCH_MS:-200}
LOGS=$(mktemp -d /tmp/cryptod-quickstart.XXXXXX)

# step TEXT LOG COMMAND...: run COMMAND with its output in LOG; say ok, or
# FAILED and the end of LOG, and stop.
step()
{
	local text=$1 log=$2
	shift 2
	printf '%s ... ' "$text"
	if "$@" >"$log" 2>&1; then
		echo ok
		return
	fi
	echo FAILED
	echo "--- the last 40 lines of $log:"
	tail -n 40 "$log"
	exit 1
}

if [ -n "${QUICKSTART_PREBUILT:-}" ]; then
	BIN=$QUICKSTART_PREBUILT
	step "Using the build in $BIN" "$LOGS/build.log" \
		test -x "$BIN/daemon/cryptod" -a -x "$BIN/cli/cryptoctl"
else
	BIN=build
	step "Installing the Debian packages it needs (scripts/deps.sh)" \
		"$LOGS/deps.log" scripts/deps.sh
	step "Building into build/ (a few minutes on 2 cores)" "$LOGS/build.log" \
		scripts/build.sh -DCRYPTOD_TESTS=OFF
fi
CTL=$BIN/cli/cryptoctl

DAEMON_ARGS=()
[ -n "${CRYPTOD_SOCKET:-}" ] && DAEMON_ARGS=(--socket "$CRYPTOD_SOCKET")
"$BIN/daemon/cryptod" "${DAEMON_ARGS[@]}" 2>"$LOGS/cryptod.log" &
DPID=$!
stop() { kill -TERM "$DPID" 2>/dev/null && wait "$DPID" || true; }
[ "$KEEP" = 1 ] || trap stop EXIT
printf 'Starting cryptod ... '
for _ in $(seq 100); do
	"$CTL" ping >/dev/null 2>&1 && break
	if ! kill -0 "$DPID" 2>/dev/null; then
		echo FAILED
		echo "--- cryptod exited; its log, $LOGS/cryptod.log:"
		tail -n 40 "$LOGS/cryptod.log"
		exit 1
	fi
	sleep 0.1
done
if ! "$CTL" ping >"$LOGS/ping.log" 2>&1; then
	echo FAILED
	cat "$LOGS/ping.log"
	exit 1
fi
echo ok
echo "  $(head -n 1 "$LOGS/ping.log")"

echo
echo "== Benchmark: AES-128-GCM encryption through cryptod and in-process =="
if "$CTL" bench --rounds 3 --time-ms "$BENCH_MS" --sizes 64,1024,16384 \
	--no-kernel >"$LOGS/bench.log" 2>&1; then
	# The table and what its columns are; the machine and daemon notes
	# stay in the log. One plain sentence when others used the CPU.
	awk '/^== / { t = 1; next }
		t && /^(Daemon|Machine)/ { t = 0 }
		/^Other programs competed/ { o = 2 }
		t || o-- > 0 { print "  " $0 }' "$LOGS/bench.log"
	echo "  (The paths: cryptod goes through the daemon's socket and shared"
	echo "  rings; the others run the same code inside the benchmark itself."
	echo "  Full report: $LOGS/bench.log)"
else
	echo "  FAILED; the end of $LOGS/bench.log:"
	tail -n 20 "$LOGS/bench.log" | sed 's/^/  /'
	exit 1
fi

echo
echo "== Known-answer test through cryptod =="
# NIST GCM test case 2: key 0^128, IV 0^96, one zero block.
want=0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf
got=$(head -c 16 /dev/zero | "$CTL" encrypt -a aes-128-gcm \
	-k 00000000000000000000000000000000 -i 000000000000000000000000 |
	od -An -v -tx1 | tr -d ' \n')
if [ "$got" = "$want" ]; then
	echo "  AES-128-GCM, NIST test case 2 (ciphertext and tag): ok"
else
	echo "  AES-128-GCM, NIST test case 2: FAIL"
	echo "    expected $want"
	echo "    got      $got"
	exit 1
fi

echo
echo "== cryptoctl stats (the head line and the engines) =="
"$CTL" stats | awk 'NF == 0 { n++ } n < 2 && NF { print "  " $0 }'

echo
echo "Next:"
echo "  $CTL stats --watch      live rates per engine, worker and queue"
echo "  $CTL --help             every command (man -l man/cryptoctl.1)"
echo "  README.md: 'Using it' (encrypt, decrypt, digest, mac), 'Running as a"
echo "  service' (the Debian packages, systemd), 'Performance' (the benchmark)"
if [ "$KEEP" = 1 ]; then
	echo
	echo "cryptod (pid $DPID) keeps running; stop it with: kill $DPID"
else
	echo "cryptod stops now (--keep leaves it running). Logs: $LOGS"
fi
