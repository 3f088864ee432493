#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What the hardened unit allows, checked against what the daemon really
# does: cryptod runs as nobody with no capabilities and no_new_privs (as
# User=cryptod, CapabilityBoundingSet=, NoNewPrivileges= give it) under
# strace, serves a workload (every algorithm through cryptoctl, stats,
# engines, shutdown), and then
#   - every system call it made is in the unit's SystemCallFilter= set
#     (systemd-analyze syscall-filter expands the groups),
#   - every socket family it opened is in RestrictAddressFamilies=,
#   - it never asked for writable+executable memory, nor mprotect'ed
#     anything executable (MemoryDenyWriteExecute=),
#   - the memory it wants locked fits LimitMEMLOCK=.
# systemd itself cannot run here (no systemd as PID 1); this is the part of
# the sandbox a test can hold the daemon to without it.
#
#   test_sandbox.sh CRYPTOD CRYPTOCTL UNIT_FILE [SANITIZE]
#
# Exit 0 when every check passed, 1 otherwise, 77 without strace,
# setpriv or systemd-analyze, when not root, or for a sanitizer build
# (its runtime makes calls of its own, and LeakSanitizer ptraces).
set -u

DAEMON=$1
CTL=$2
UNIT=$3
SAN=${4:-}

if [ -n "$SAN" ]; then
	echo "skipped: sanitizer build ($SAN); the unit is for release builds"
	exit 77
fi
for t in strace setpriv systemd-analyze; do
	command -v "$t" >/dev/null || { echo "skipped: $t missing"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (to become nobody)"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptod-sandbox.XXXXXX") || exit 1
chmod 0755 "$tmp"
mkdir "$tmp/run" && chmod 0777 "$tmp/run"
spid=
cleanup()
{
	[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad()
{
	fail=$((fail + 1))
	echo "FAIL: $*" >&2
}

# ---- The unit's policy ----
# SystemCallFilter= lines apply in order: the first allow list sets the
# set, "~..." lines remove from it, later plain lines add to it.
expand() # @group or name -> names
{
	case $1 in
	@*) systemd-analyze syscall-filter --no-pager "$1" 2>/dev/null |
		awk 'NR > 1 && !/^ *#/ && NF { print $1 }' |
		while read -r s; do expand "$s"; done ;;
	*) echo "$1" ;;
	esac
}
: >"$tmp/allow"
while read -r value; do
	if [ "${value#\~}" != "$value" ]; then
		for item in ${value#\~}; do expand "$item"; done | sort -u >"$tmp/deny1"
		sort -u "$tmp/allow" | comm -23 - "$tmp/deny1" >"$tmp/allow.new"
		mv "$tmp/allow.new" "$tmp/allow"
	else
		for item in $value; do expand "$item"; done >>"$tmp/allow"
	fi
done < <(sed -n 's/^SystemCallFilter=//p' "$UNIT")
sort -u -o "$tmp/allow" "$tmp/allow"
[ "$(wc -l <"$tmp/allow")" -gt 100 ] && ok || bad "no SystemCallFilter= allow list parsed from $UNIT"
families=$(sed -n 's/^RestrictAddressFamilies=//p' "$UNIT")
[ -n "$families" ] && ok || bad "no RestrictAddressFamilies= in $UNIT"
memlock=$(sed -n 's/^LimitMEMLOCK=\([0-9]*\)M$/\1/p' "$UNIT")
[ -n "$memlock" ] && ok || bad "no LimitMEMLOCK=<n>M in $UNIT"

# ---- The daemon, sandboxed as far as setpriv goes, traced ----
sock=$tmp/run/cryptod.sock
strace -f -qq -o "$tmp/trace" \
	setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs \
	--bounding-set=-all --inh-caps=-all \
	"$DAEMON" --socket "$sock" --workers 2 --pin >"$tmp/log" 2>&1 &
spid=$!
for _ in $(seq 300); do
	grep -q "listening on" "$tmp/log" && break
	sleep 0.1
done
grep -q "listening on" "$tmp/log" && ok || { bad "daemon did not start as nobody:"; cat "$tmp/log" >&2; }

export CRYPTOD_SOCKET=$sock
K16=000102030405060708090a0b0c0d0e0f
K32=$K16$K16
K32X=${K16}f0e0d0c0b0a090807060504030201000
IV16=$K16
IV12=000102030405060708090a0b
crypt_roundtrip() # LABEL ENCRYPT-ARGS...
{
	local label=$1
	shift
	local out
	out=$(head -c 4096 /dev/urandom >"$tmp/pt" &&
		"$CTL" encrypt "$@" <"$tmp/pt" >"$tmp/ct" &&
		"$CTL" decrypt "$@" <"$tmp/ct" | cmp - "$tmp/pt" 2>&1) && ok ||
		bad "$label round trip through the sandboxed daemon: $out"
}
crypt_roundtrip aes-gcm -a aes-128-gcm -k "$K16" -i "$IV12" --aad 0102
crypt_roundtrip aes-cbc -a aes-128-cbc -k "$K16" -i "$IV16"
crypt_roundtrip aes-ctr -a aes-128-ctr -k "$K16" -i "$IV16"
crypt_roundtrip aes-ecb -a aes-128-ecb -k "$K16"
crypt_roundtrip aes-xts -a aes-128-xts -k "$K32X" -i "$IV16"
crypt_roundtrip esp-sha256 -a aes-cbc-hmac-sha256 -k "$K16" --auth-key "$K32" -i "$IV16"
crypt_roundtrip openssl-gcm -a aes-256-gcm -k "$K32" -i "$IV12" --engine openssl
crypt_roundtrip sessionless -a aes-128-gcm -k "$K16" -i "$IV12" --sessionless
"$CTL" stats >/dev/null && "$CTL" engines >/dev/null && ok || bad "stats/engines"
# SIGTERM to the daemon itself (strace's child: setpriv exec'ed it);
# strace then exits with the daemon's status.
dpid=$(pgrep -P "$spid" | head -1)
[ -n "$dpid" ] && kill -TERM "$dpid"
wait "$spid"
st=$?
spid=
[ "$st" -eq 0 ] && ok || bad "exit status $st after SIGTERM"

# The daemon's own calls: from its execve on, its pid and the threads it
# (and they) cloned. Lines: "PID name(args) = ret", "PID <... name resumed>".
awk -v daemon="$DAEMON" '
	!inset[$1] && $2 ~ /^execve\(/ && index($0, "execve(\"" daemon "\"") { inset[$1] = 1 }
	!inset[$1] { next }
	$2 ~ /^clone3?\(/ && $NF ~ /^[0-9]+$/ { inset[$NF] = 1 }
	{
		name = $2
		if (name == "<...") name = $3
		sub(/\(.*/, "", name)
		if (name ~ /^[a-z_0-9]+$/) print name > "/dev/stderr"
		print
	}' "$tmp/trace" >"$tmp/daemon.trace" 2>"$tmp/calls"
sort -u -o "$tmp/calls" "$tmp/calls"
n=$(wc -l <"$tmp/calls")
[ "$n" -gt 20 ] && ok || bad "only $n distinct system calls traced: the trace is not the daemon's"
denied=$(comm -23 "$tmp/calls" "$tmp/allow" | tr '\n' ' ')
[ -z "$denied" ] && ok || bad "system calls outside SystemCallFilter=: $denied"
echo "system calls: $n distinct; the unit allows $(wc -l <"$tmp/allow")"

used=$(grep -o 'socket(AF_[A-Z0-9]*' "$tmp/daemon.trace" | sed 's/socket(//' | sort -u | tr '\n' ' ')
for f in $used; do
	case " $families " in
	*" $f "*) ok ;;
	*) bad "socket family $f not in RestrictAddressFamilies=$families" ;;
	esac
done
echo "socket families: $used"

if grep -E '(mmap|mprotect)\(' "$tmp/daemon.trace" | grep -q 'PROT_WRITE|PROT_EXEC\|PROT_EXEC|PROT_WRITE'; then
	bad "writable+executable memory requested (MemoryDenyWriteExecute=):"
	grep -E 'PROT_WRITE\|PROT_EXEC' "$tmp/daemon.trace" | head -3 >&2
else
	ok
fi
if grep -E '^[0-9]+ +mprotect\(.*PROT_EXEC' "$tmp/daemon.trace" | grep -q .; then
	bad "mprotect(PROT_EXEC) (MemoryDenyWriteExecute= refuses it):"
	grep -E 'mprotect\(.*PROT_EXEC' "$tmp/daemon.trace" | head -3 >&2
else
	ok
fi

# What the daemon mlock()s must fit LimitMEMLOCK= (here the rlimit may be
# too small for the key slab; the sizes it asked for are in the trace).
locked=$(grep -oE 'mlock\(0x[0-9a-f]+, [0-9]+' "$tmp/daemon.trace" |
	sed 's/.*, //' | awk '{ s += $1 } END { print s + 0 }')
# --workers 2 here; the unit may run up to 64 workers.
per_worker=$(grep -oE 'mlock\(0x[0-9a-f]+, [0-9]+' "$tmp/daemon.trace" |
	sed 's/.*, //' | sort -n | uniq -c | awk '$1 == 2 { print $2 }' | head -1)
[ -n "$per_worker" ] && ok || bad "no per-worker mlock() found in the trace"
need=$((locked + 62 * ${per_worker:-0}))
echo "mlock: $locked bytes with 2 workers, about $need with 64; LimitMEMLOCK=${memlock}M"
[ "$locked" -gt 0 ] && ok || bad "no mlock() traced (the key slab is locked at start-up)"
[ "$need" -le $((memlock * 1024 * 1024)) ] && ok ||
	bad "LimitMEMLOCK=${memlock}M is below the $need bytes the daemon locks with 64 workers"

echo "sandbox: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
