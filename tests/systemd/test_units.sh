#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The systemd units, checked with systemd's own tools on an install tree:
#   systemd-analyze verify   the units as installed (clean: no output),
#                            with man:cryptod(8) found, and with the
#                            optional CAP_NET_ADMIN drop-in; the exporter's
#                            cryptod-metrics.socket and .service too
#   systemd-analyze security --offline: overall exposure <= 2.0; a copy
#                            with the hardening stripped must score worse
#                            (so this check can fail)
#   systemd-sysusers / systemd-tmpfiles --root: the user, group and
#                            runtime directory they create
#
#   test_units.sh CMAKE BUILD_DIR
#
# Exit 0 when every check passed, 1 otherwise, 77 when systemd-analyze
# is missing.
set -u

CMAKE=$1
BUILD=$2
MAX_EXPOSURE=2.0

if ! command -v systemd-analyze >/dev/null; then
	echo "skipped: systemd-analyze not found (Debian package systemd)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptod-units.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad()
{
	fail=$((fail + 1))
	echo "FAIL: $*" >&2
}

prefix=$tmp/prefix
"$CMAKE" --install "$BUILD" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1; }
units=$prefix/lib/systemd/system
svc=$units/cryptod.service
sockunit=$units/cryptod.socket
msvc=$units/cryptod-metrics.service
msock=$units/cryptod-metrics.socket
for f in "$svc" "$sockunit" "$msvc" "$msock" "$prefix/lib/sysusers.d/cryptod.conf" \
	"$prefix/lib/tmpfiles.d/cryptod.conf"; do
	[ -f "$f" ] && ok || bad "not installed: ${f#$prefix/}"
done
grep -q "^ExecStart=$prefix/sbin/cryptod\( \|$\)" "$svc" && ok ||
	bad "ExecStart= does not name the installed daemon: $(grep ExecStart= "$svc")"

# The configuration is checked before reload (a broken file fails the
# reload, the daemon keeps running); at start the daemon checks it itself
# and exits 78, which the unit does not retry. Outside prefix /usr the unit
# names the installed file. Run the unit's own command lines: the shipped
# configuration passes, a broken one fails with the status the unit knows.
grep -q '^ExecStartPre=' "$svc" && bad "ExecStartPre= is back: its failure would be retried" || ok
pre=$(sed -n 's/^ExecReload=\(.*--check-config.*\)/\1/p' "$svc")
case "$pre" in
"$prefix/sbin/cryptod --check-config"*) ok ;;
*) bad "the first ExecReload= is not 'cryptod --check-config': $pre" ;;
esac
start=$(sed -n 's/^ExecStart=//p' "$svc")
grep -qx 'RestartPreventExitStatus=2 78' "$svc" && ok ||
	bad "cryptod.service retries configuration errors: $(grep ^RestartPrevent "$svc")"
grep -qx 'StartLimitIntervalSec=0' "$svc" && ok ||
	bad "cryptod.service has a start limit: hitting it takes cryptod.socket down"
if [ -f "$prefix/etc/cryptod/cryptod.conf" ]; then
	[ "$start" = "$prefix/sbin/cryptod --config $prefix/etc/cryptod/cryptod.conf" ] && ok ||
		bad "ExecStart= does not name the installed configuration: $start"
	out=$($pre 2>&1) && ok || bad "the unit's reload check fails on the shipped configuration: $out"
	cp "$prefix/etc/cryptod/cryptod.conf" "$tmp/good.conf"
	{ cat "$tmp/good.conf"; echo "workers = many"; } >"$prefix/etc/cryptod/cryptod.conf"
	$pre >/dev/null 2>&1 && bad "the unit's reload check accepted 'workers = many'" || ok
	# shellcheck disable=SC2086 # the unit's command line, split as systemd does
	$start --socket "$tmp/never.sock" >/dev/null 2>&1
	rc=$?
	[ $rc = 78 ] && ok || bad "ExecStart= on 'workers = many' exited $rc, not 78"
	cp "$tmp/good.conf" "$prefix/etc/cryptod/cryptod.conf"
fi

# verify: nothing to say is the only pass. --man=yes checks that
# Documentation= man pages exist (MANPATH points at the install tree).
verify()
{
	local out
	out=$(MANPATH=$prefix/share/man: systemd-analyze verify --man=yes "$@" 2>&1)
	if [ $? -eq 0 ] && [ -z "$out" ]; then
		ok
	else
		bad "systemd-analyze verify $*: $out"
	fi
}
verify "$svc" "$sockunit"
verify "$msvc" "$msock"

# The optional drop-in: copy the units next to a cryptod.service.d/.
mkdir -p "$tmp/dropin/cryptod.service.d"
cp "$svc" "$sockunit" "$tmp/dropin/"
cp "$prefix/share/doc/cryptod/examples/cryptod.service.d/pcrypt.conf" \
	"$tmp/dropin/cryptod.service.d/" || bad "pcrypt.conf drop-in not installed"
verify "$tmp/dropin/cryptod.service" "$tmp/dropin/cryptod.socket"
SYSTEMD_UNIT_PATH=$tmp/dropin: systemd-analyze cat-config --no-pager \
	"$tmp/dropin/cryptod.service" >/dev/null 2>&1 || true

# A broken unit must fail verify (the check above can fail).
sed 's/^Type=notify/Type=notifyy/' "$svc" >"$tmp/cryptod.service"
cp "$sockunit" "$tmp/"
out=$(systemd-analyze verify --man=no "$tmp/cryptod.service" 2>&1)
[ -n "$out" ] && ok || bad "verify accepted Type=notifyy"
rm -f "$tmp/cryptod.service" "$tmp/cryptod.socket"

# exposure: "→ Overall exposure level for cryptod.service: 0.9 SAFE"
exposure()
{
	(cd "$(dirname "$1")" && systemd-analyze security --offline=true \
		--no-pager "$(basename "$1")" 2>&1) |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
e=$(exposure "$svc")
echo "exposure: $e (at most $MAX_EXPOSURE)"
if [ -n "$e" ] && awk -v e="$e" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(e <= m) }'; then
	ok
else
	bad "exposure '$e' above $MAX_EXPOSURE:"
	(cd "$units" && systemd-analyze security --offline=true --no-pager cryptod.service | grep '✗') >&2
fi
# --threshold takes tenths: 20 = 2.0.
(cd "$units" && systemd-analyze security --offline=true --threshold=20 \
	cryptod.service >/dev/null 2>&1) && ok || bad "security --threshold=20 failed"

mkdir -p "$tmp/weak"
grep -vE '^(Protect|Private|Restrict|SystemCall|Capability|NoNewPriv|User=|Group=|MemoryDeny|LockPers|IPAddress|DevicePolicy|RemoveIPC|KeyringMode|UMask)' \
	"$svc" >"$tmp/weak/cryptod.service"
cp "$sockunit" "$tmp/weak/"
w=$(exposure "$tmp/weak/cryptod.service")
echo "exposure without hardening: $w"
if [ -n "$w" ] && awk -v e="$w" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(e > m) }'; then
	ok
else
	bad "a unit without hardening scored '$w': the exposure check cannot fail"
fi

# The exporter: cryptoctl stats --serve on the socket systemd passes,
# loopback, as cryptod's user (which sees every client's figures) with
# none of cryptod's files, hardened at least as well as the daemon.
e=$(exposure "$msvc")
echo "exporter exposure: $e (at most $MAX_EXPOSURE)"
[ -n "$e" ] && awk -v e="$e" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(e <= m) }' && ok ||
	bad "cryptod-metrics.service exposure '$e' above $MAX_EXPOSURE"
mstart=$(sed -n 's/^ExecStart=//p' "$msvc")
[ "$mstart" = "$prefix/bin/cryptoctl stats --serve" ] && ok ||
	bad "cryptod-metrics.service: ExecStart=$mstart"
"$prefix/bin/cryptoctl" stats --help 2>/dev/null | grep -q -- '--serve' && ok ||
	bad "the installed cryptoctl has no stats --serve"
grep -qx 'ListenStream=127.0.0.1:9464' "$msock" && grep -qx 'Accept=no' "$msock" && ok ||
	bad "cryptod-metrics.socket: loopback 127.0.0.1:9464 with Accept=no expected"
for k in User=cryptod 'InaccessiblePaths=-/var/lib/cryptod -/etc/cryptod' PrivateNetwork=yes \
	RestrictAddressFamilies=AF_UNIX$ CapabilityBoundingSet=$ NoNewPrivileges=yes; do
	grep -q "^$k" "$msvc" && ok || bad "cryptod-metrics.service lacks $k"
done

# The socket: what clients rely on.
grep -qx 'ListenSequentialPacket=/run/cryptod/cryptod.sock' "$sockunit" && ok ||
	bad "cryptod.socket does not listen on /run/cryptod/cryptod.sock (seqpacket)"
grep -qx 'SocketMode=0660' "$sockunit" && grep -qx 'SocketGroup=cryptod' "$sockunit" && ok ||
	bad "cryptod.socket: mode 0660 group cryptod expected"
grep -qx 'FlushPending=yes' "$sockunit" && ok ||
	bad "cryptod.socket keeps connections a failed start left: it would start the service for them at once, again and again"
for k in Type=notify WatchdogSec= Restart=on-failure ExecReload= LimitMEMLOCK= LimitCORE=0 \
	RestrictAddressFamilies=AF_UNIX.AF_ALG.AF_NETLINK CapabilityBoundingSet=$; do
	grep -q "^$k" "$svc" && ok || bad "cryptod.service lacks $k"
done

# sysusers and tmpfiles, applied to an empty root.
root=$tmp/root
mkdir -p "$root/etc"
if systemd-sysusers --root="$root" "$prefix/lib/sysusers.d/cryptod.conf" >"$tmp/su.log" 2>&1; then
	grep -q '^cryptod:x:[0-9]*:[0-9]*:.*:/usr/sbin/nologin$\|^cryptod:x:[0-9]*:[0-9]*:' "$root/etc/passwd" && ok ||
		bad "sysusers created no user cryptod"
	grep -q '^cryptod:x:' "$root/etc/group" && ok || bad "sysusers created no group cryptod"
else
	bad "systemd-sysusers: $(cat "$tmp/su.log")"
fi
if [ "$(id -u)" -eq 0 ]; then
	if systemd-tmpfiles --root="$root" --create "$prefix/lib/tmpfiles.d/cryptod.conf" >"$tmp/tf.log" 2>&1; then
		[ "$(stat -c %a "$root/run/cryptod" 2>/dev/null)" = 755 ] && ok ||
			bad "tmpfiles did not create /run/cryptod 0755"
	else
		bad "systemd-tmpfiles: $(cat "$tmp/tf.log")"
	fi
fi

echo "systemd units: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
