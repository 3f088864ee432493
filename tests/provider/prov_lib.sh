# What the provider's shell tests share (sourced, not run): skipping
# where a test cannot run, a private directory, one daemon (one for key
# pairs, with a KEK and a key store), an OpenSSL configuration that loads
# the provider, the failure count and the verdict. A test sets daemon=, ctl= (when it starts a
# daemon) and may define prov_cleanup (more to stop at exit) before
# prov_tmp.

fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Debian's openssl, nginx, curl and python3 are not built with
# sanitizers, and a sanitized module cannot load into them (the runtime
# must come first); the C programs (test_prov_evp*) run the sanitized
# provider.
prov_need_unsanitized() { # SANITIZE
	[ -z "$1" ] || { echo "SKIP: provider built with -fsanitize=$1"; exit 77; }
}

# Skip (77) without each command.
prov_need() { # CMD...
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || { echo "SKIP: no $t"; exit 77; }
	done
}

# tmp: a private directory, removed at exit with the daemon stopped.
dpid=
prov_tmp() { # NAME
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptod-prov-$1.XXXXXX") || exit 1
	trap prov_exit EXIT
}
prov_exit() {
	declare -F prov_cleanup >/dev/null && prov_cleanup
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$tmp"
}

# Start $daemon on SOCK (more arguments after it), its log in
# $tmp/daemon.log, and wait until $ctl reaches it; a daemon that does not
# come up fails the test with its log.
prov_daemon_start() { # SOCK [ARG...]
	local sock=$1
	shift
	[ -x "$daemon" ] || { echo "SKIP: no daemon at $daemon"; exit 77; }
	"$daemon" --socket "$sock" --no-config --log-level error "$@" \
		>"$tmp/daemon.log" 2>&1 &
	dpid=$!
	for _ in $(seq 100); do
		"$ctl" --socket "$sock" ping >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	cat "$tmp/daemon.log"
	echo "FAIL: daemon"
	exit 1
}

# An OpenSSL configuration in FILE that loads the default provider and
# cryptod's (module $provdir/cryptod.so), the default first; each LINE
# more goes into cryptod's section (socket = ..., fallback = ...).
prov_cnf() { # FILE [LINE...]
	local f=$1
	shift
	{
		printf '%s\n' "openssl_conf = openssl_init" "[openssl_init]" \
			"providers = provider_sect" "[provider_sect]" \
			"default = default_sect" "cryptod = cryptod_sect" \
			"[default_sect]" "activate = 1" "[cryptod_sect]" \
			"module = $provdir/cryptod.so" "activate = 1"
		[ $# -eq 0 ] || printf '%s\n' "$@"
	} >"$f"
}

# A daemon for key pairs on $CRYPTOD_SOCKET ($tmp/cryptod.sock): a KEK
# of its own (credential kek, in $tmp/creds), named keys in $tmp/keys.
# prov_keys_daemon starts it again after a stop (the same KEK and keys).
prov_keys_daemon() {
	if [ ! -d "$tmp/creds" ]; then
		mkdir -m 0700 "$tmp/creds"
		head -c 32 /dev/urandom >"$tmp/creds/kek"
		chmod 0400 "$tmp/creds/kek"
	fi
	export CREDENTIALS_DIRECTORY=$tmp/creds
	export CRYPTOD_SOCKET=$tmp/cryptod.sock
	prov_daemon_start "$CRYPTOD_SOCKET" --set keys.kek=credential:kek \
		--set keys.dir="$tmp/keys"
}

# The bytes every engine of the daemon at $CRYPTOD_SOCKET has served.
daemon_bytes() {
	"$ctl" stats --json | python3 -c '
import json, sys
print(sum(e["bytes"] for e in json.load(sys.stdin)["engines"]))'
}

# The verdict: exit 0 with PASS, or 1 with the count.
prov_end() {
	if [ "$fails" -ne 0 ]; then
		echo "FAIL: $fails"
		exit 1
	fi
	echo "PASS"
	exit 0
}
