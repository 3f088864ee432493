# SPDX-License-Identifier: MIT
#
# What the cryptoctl tests share (sourced, not run): a real cryptod on a
# temporary socket, the checks and counters, the helpers, and finish(),
# which stops the daemon and prints "N checks passed, N failed".
#
#   . cryptoctl_lib.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]
#
# GCM_REF is an OpenSSL AES-GCM with cryptoctl's conventions (gcm_ref.c);
# HOLD_QUEUE a client that keeps a queue open (hold_queue.c). Python's
# 'cryptography' package, when importable, is a second independent check
# for GCM and the reference for every other algorithm, on every engine
# 'cryptoctl engines --json' lists, with and without a session.
# Each test exits 0 when every check passed, 1 otherwise.
set -u

DAEMON=$1
CTL=$2
REF=${3:-}
HOLD=${4:-}
VEC=/usr/lib/python3/dist-packages/cryptography_vectors/ciphers/AES/GCM
AESVEC=${VEC%/GCM}
# How many vectors of each [Keylen/IVlen/PTlen/AADlen/Taglen] section to run.
NIST_PER_SECTION=${NIST_PER_SECTION:-1}
# The same for CBC, ECB, CTR and XTS ([ENCRYPT]/[DECRYPT], and XTS's
# data unit lengths).
CAVP_PER_SECTION=${CAVP_PER_SECTION:-2}
# Random cases per algorithm in the cross-check with python.
XCHECK_PER_ALG=${XCHECK_PER_ALG:-4}

# python3 checks the JSON output; Debian's vectors are a python package too.
if ! command -v python3 >/dev/null; then
	echo "skipped: python3 is needed"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptoctl-test.XXXXXX") || exit 1
sock=$tmp/cryptod.sock
dpid=
hpid=
pass=0
fail=0

cleanup()
{
	[ -n "$hpid" ] && kill "$hpid" 2>/dev/null
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

ok() { pass=$((pass + 1)); }
bad()
{
	fail=$((fail + 1))
	echo "FAIL: $*" >&2
}
# check DESCRIPTION COMMAND...: COMMAND's status decides.
check()
{
	local desc=$1
	shift
	if "$@"; then
		ok
		echo "ok: $desc"
	else
		bad "$desc"
	fi
}
section() { echo "== $*"; }

# The tests run these thousands of times: each costs one process at most
# (a start is several milliseconds here, and the heavy tests were mostly
# starts). bash 5.2 expands & in a substitution to the match.
if shopt -s patsub_replacement 2>/dev/null; then
	hex2bin() { printf '%b' "${1//??/\\x&}"; }
else
	hex2bin() { printf '%b' "$(sed 's/../\\x&/g' <<<"$1")"; }
fi
bin2hex() { hexdump -ve '1/1 "%02x"'; }
randhex() { hexdump -n "$1" -ve '1/1 "%02x"' /dev/urandom; }
lines() { local n; n=$(wc -l <"$1"); echo "$n"; }

# ctl ARGS... : run cryptoctl; stdout in $out, stderr in $err, status in $rc.
out=$tmp/out
err=$tmp/err
ctl()
{
	"$CTL" "$@" >"$out" 2>"$err"
	rc=$?
}

# A bad-argument failure: status 2, nothing on stdout, one line on stderr
# that starts with "cryptoctl: ". expect_usage_from reads stdin from FILE.
expect_usage_from()
{
	local in=$1
	shift
	ctl "$@" <"$in"
	if [ "$rc" -eq 2 ] && [ ! -s "$out" ] && [ "$(lines "$err")" -eq 1 ] &&
		grep -q '^cryptoctl: ' "$err"; then
		ok
		echo "ok: exit 2: cryptoctl $*: $(cat "$err")"
	else
		bad "usage error expected for: $* (rc=$rc, stderr: $(cat "$err"))"
	fi
}
expect_usage() { expect_usage_from /dev/null "$@"; }

# ---------------------------------------------------------------------------
section "start cryptod on $sock"
# A test may define daemon_setup to prepare files in $tmp and set
# DAEMON_ARGS (more options, split on white space) before the start.
DAEMON_ARGS=
if declare -F daemon_setup >/dev/null; then
	daemon_setup
fi
# daemon_start: cryptod on $sock (pid in dpid), answering pings; a test
# that stopped it starts it again with this.
daemon_start()
{
	# shellcheck disable=SC2086 # DAEMON_ARGS is a list
	"$DAEMON" --socket "$sock" --workers 2 $DAEMON_ARGS >>"$tmp/daemon.log" 2>&1 &
	dpid=$!
	for _ in $(seq 100); do
		"$CTL" --socket "$sock" ping >/dev/null 2>&1 && break
		if ! kill -0 "$dpid" 2>/dev/null; then
			echo "cryptod exited during start-up:" >&2
			cat "$tmp/daemon.log" >&2
			exit 1
		fi
		sleep 0.1
	done
}
daemon_start
export CRYPTOD_SOCKET=$sock

K16=000102030405060708090a0b0c0d0e0f
IV12=000102030405060708090a0b
IV16=$K16
K32=$K16$(randhex 16)
AK=$(randhex 20)
# The algorithms the round trips and cross-checks run.
ALGS_RUN="aes-gcm aes-gmac aes-cbc aes-ctr aes-ecb aes-xts aes-cbc-hmac-sha1
aes-cbc-hmac-sha256 aes-cbc-hmac-sha384 aes-cbc-hmac-sha512 aes-ctr-hmac-sha1
aes-ctr-hmac-sha256 aes-cbc-null null"

# engines_txt: "ALG ENGINE" for every available row of 'cryptoctl engines
# --json', in $tmp/engines.txt (engines_of reads it).
engines_txt()
{
	"$CTL" engines --json >"$tmp/engines.json" 2>/dev/null &&
		python3 - "$tmp/engines.json" >"$tmp/engines.txt" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1]))["algorithms"]:
    if r["available"]:
        print(r["alg"], r["engine"])
EOF
}
# engines_of ALG: the engines that run ALG, for the cross-checks below.
engines_of()
{
	awk -v a="$1" '$1 == a { printf "%s ", $2 }' "$tmp/engines.txt"
}
# alg_args ALG: options for ALG with fresh keys, in the array args; the
# tag it appends in tag_len; its length rule in len_rule.
alg_args()
{
	tag_len=0 len_rule=any
	case $1 in
	aes-gcm) args=(-k "$(randhex 32)" -i "$(randhex 12)" --aad "$(randhex 20)")
		tag_len=16 ;;
	aes-gmac) args=(-k "$(randhex 24)" -i "$(randhex 12)") tag_len=16 ;;
	aes-cbc | aes-cbc-null) args=(-k "$(randhex 24)" -i "$(randhex 16)")
		len_rule=blocks ;;
	aes-ctr) args=(-k "$(randhex 16)" -i "$(randhex 16)") ;;
	aes-ecb) args=(-k "$(randhex 32)") len_rule=blocks ;;
	aes-xts) args=(-k "$(randhex 64)" -i "$(randhex 16)") len_rule=min16 ;;
	aes-cbc-hmac-* | aes-ctr-hmac-*)
		args=(-k "$(randhex 16)" -i "$(randhex 16)" --auth-key "$(randhex 32)"
			--aad "$(randhex 24)")
		case $1 in aes-cbc-*) len_rule=blocks ;; esac
		case ${1##*-} in
		sha1) tag_len=12 ;;
		sha256) tag_len=16 ;;
		sha384) tag_len=24 ;;
		sha512) tag_len=32 ;;
		esac ;;
	null) args=() ;;
	esac
}
# how_opts WAY: the options of one way to run an op, in the array extra:
# the default engine, session-less, or a named engine.
how_opts()
{
	case $1 in
	default) extra=() ;;
	sessionless) extra=(--sessionless) ;;
	*) extra=(--engine "$1") ;;
	esac
}
# flip_at FILE OFFSET: invert the byte at OFFSET in place (inverted, not
# set: a byte set to a fixed value leaves the file as it was once in 256)
flip_at()
{
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf %03o $((b ^ 0xff)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
# flip BYTE_OFFSET: copy of $tmp/ct with one byte inverted, in $tmp/bad
flip()
{
	cp "$tmp/ct" "$tmp/bad"
	flip_at "$tmp/bad" "$1"
}

# finish NAME: stop cryptod with SIGTERM (it must exit 0), report, exit.
finish()
{
	# ---------------------------------------------------------------------------
	section "stop cryptod with SIGTERM"
	kill -TERM "$dpid"
	for _ in $(seq 100); do
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$dpid" 2>/dev/null; then
		bad "cryptod still running 10 s after SIGTERM"
	else
		wait "$dpid"
		drc=$?
		check "cryptod exits 0 on SIGTERM (got $drc)" test "$drc" -eq 0
	fi
	dpid=
	ctl ping
	check "ping after the daemon stopped: exit 1" test "$rc" -eq 1

	echo "$1: $pass checks passed, $fail failed"
	if [ "$fail" -ne 0 ]; then
		echo "--- cryptod log (tail)" >&2
		tail -n 30 "$tmp/daemon.log" >&2
		exit 1
	fi
	exit 0
}
