# What the provider benchmarks share (sourced: provider-speed.sh,
# provider-enc.sh, pkey-speed.sh): the build's binaries checked, a private
# daemon with $WORKERS workers (and the DAEMON_ARGS array, if set) pinned to CPU 1 and openssl to CPU 0 when $PIN is 1
# (pin_c: the prefix for openssl), the machine printed, and dbytes, the
# daemon's byte counter. The caller sets BUILD, WORKERS, PIN and NAME.
CTL=$BUILD/cli/cryptoctl
[ -x "$CTL" ] && [ -x "$BUILD/daemon/cryptod" ] &&
	[ -e "$BUILD/provider/cryptod.so" ] || {
	echo "$NAME: build first ($BUILD/provider/cryptod.so missing)" >&2
	exit 2
}
dir=$(mktemp -d)
trap 'kill "$dpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
pin_d=() pin_c=()
if [ "$PIN" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	pin_d=(taskset -c 1) pin_c=(taskset -c 0)
fi
"${pin_d[@]}" "$BUILD/daemon/cryptod" --no-config --socket "$dir/s.sock" \
	--workers "$WORKERS" --log-level warn ${DAEMON_ARGS[@]+"${DAEMON_ARGS[@]}"} \
	2>"$dir/daemon.log" &
dpid=$!
export CRYPTOD_SOCKET=$dir/s.sock
for _ in $(seq 100); do "$CTL" ping >/dev/null 2>&1 && break; sleep 0.05; done
"$CTL" bench --spawn-daemon "$BUILD/daemon/cryptod" --alg aes-128-gcm \
	--sizes 64 --smoke --csv 2>&1 >/dev/null | grep -E "^Machine" || true
# "pinned: ..." for the caller's openssl line.
pinned() {
	[ ${#pin_d[@]} -gt 0 ] && echo "openssl CPU 0, daemon CPU 1" || echo no
}
dbytes() {
	"$CTL" stats --json | python3 -c 'import json, sys
print(sum(e["bytes"] for e in json.load(sys.stdin)["engines"]))'
}
