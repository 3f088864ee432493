#!/bin/bash
# The VM suite, run by tests/vm/init.sh inside the guest: as root, chrooted
# into the host's root filesystem (read-only), with tmpfs on /tmp, /run,
# /dev/shm and /var/tmp, and the writable share at $VMSHARE.
#
# Environment (from run-vm.sh): REPO (the checkout), BUILD (build directory,
# read-only here), VMSHARE (writable: cryptoshim.ko, afalg-check, results),
# HAVE_KMOD (1 if $VMSHARE/cryptoshim.ko is there), VMTEST_ONLY (if set, a
# regex: tests whose names do not match are left out silently),
# VMTEST_VERBOSE (1: show passing tests' output too).
#
# Prints one "VMTEST PASS|FAIL|SKIP <name> ..." line per test, a failing
# test's output indented below its line, and exits non-zero if any failed.
# Runs the built-in tests below, then every entry of tests/vm/kernel-tests.list.
set -u
cd "$REPO" || exit 1
export TMPDIR=/tmp
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
SYS=/sys/kernel/cryptoshim
KO=$VMSHARE/cryptoshim.ko
SELF=$(readlink -f "$0")
FAILED=0

# vmtest NAME COMMAND [ARGS...]: run one test (exit 0 pass, 77 skip, else
# fail) with a time limit, its output kept for the report.
vmtest() {
	local name=$1 out=$TMPDIR/vmtest.out rc t0 t1 took
	shift
	# facts and modules set the guest up: they always run
	if [ -n "${VMTEST_ONLY:-}" ] && ! [[ $name =~ $VMTEST_ONLY ]] &&
		[ "$name" != facts ] && [ "$name" != modules ]; then
		return 0
	fi
	# exec is slow under TCG: bash builtins where they do
	t0=${EPOCHREALTIME/./}
	# a shell function runs in a fresh copy of this script (timeout
	# needs a program)
	declare -F "$1" >/dev/null && set -- bash "$SELF" --run "$@"
	timeout -k 5 "$TEST_TIMEOUT" "$@" >"$out" 2>&1 </dev/null
	rc=$?
	t1=${EPOCHREALTIME/./}
	took=$(((t1 - t0) / 100000))
	took=$((took / 10)).$((took % 10))
	case $rc in
	0)
		echo "VMTEST PASS $name (${took} s)"
		[ "${VMTEST_VERBOSE:-0}" = 1 ] && sed 's/^/    /' "$out"
		;;
	77) echo "VMTEST SKIP $name: $(tail -1 "$out")" ;;
	*)
		[ $rc = 124 ] && echo "  (timed out after $TEST_TIMEOUT s)" >>"$out"
		echo "VMTEST FAIL $name (exit $rc, ${took} s)"
		tail -40 "$out" | sed 's/^/    /'
		FAILED=$((FAILED + 1))
		;;
	esac
}

fail() {
	echo "$*"
	exit 1
}

# ---------------------------------------------------------------- facts
t_facts() {
	local n
	n=$(nproc)
	echo "kernel $(uname -r), $n cpus"
	[ "$n" -ge 2 ] || fail "pcrypt needs more than one CPU, have $n"
	[ "$(</proc/sys/crypto/fips_enabled)" = 0 ] ||
		fail "FIPS mode is on: it restricts the algorithm list"
	[ "$(</proc/sys/kernel/modules_disabled)" = 0 ] ||
		fail "module loading is disabled"
	[ -w /tmp ] || fail "/tmp is not writable"
	if touch "$BUILD/.vm-rw-probe" 2>/dev/null; then
		rm -f "$BUILD/.vm-rw-probe"
		fail "the build directory is writable"
	fi
	return 0
}

# Load what the kernel engine uses. modprobe resolves dependencies from the
# host's /lib/modules (same kernel: run-vm.sh booted it).
CRYPTO_MODS=(af_alg algif_aead algif_skcipher algif_hash crypto_user pcrypt
	gcm ghash-generic aesni_intel authenc lrw xts ctr ecb cbc
	sha1_generic sha256_generic hmac)
t_modules() {
	local m
	modprobe -a "${CRYPTO_MODS[@]}" || fail "modprobe -a failed"
	for m in "${CRYPTO_MODS[@]}"; do
		# built-in ones (cbc, hmac, sha*) are fine too
		[ -d "/sys/module/${m//-/_}" ] || grep -q "/$m.ko" \
			"/lib/modules/$(uname -r)/modules.builtin" ||
			fail "$m is not loaded"
	done
	grep -q '^driver *: generic-gcm-aesni' /proc/crypto ||
		fail "aesni gcm(aes) is not in /proc/crypto"
}

# Nothing crypto is loaded yet: the kernel must load af_alg, algif_aead,
# gcm, aesni_intel... by itself, as on a real machine.
t_afalg_autoload() {
	lsmod | grep -qE '^(af_alg|algif_aead|pcrypt) ' &&
		fail "AF_ALG modules already loaded: cannot test autoloading"
	"$VMSHARE/afalg-check" 'gcm(aes)' || fail "AF_ALG did not autoload"
	lsmod | awk '$1 ~ /^(af_alg|algif_aead|gcm|aesni_intel)$/ { print "autoloaded", $1 }'
}

t_afalg_gcm() {
	"$VMSHARE/afalg-check" 'gcm(aes)' 10
}

# ---------------------------------------------------------- cryptoshim.ko
# Every module test starts unloaded, so one failure does not cascade.
need_kmod() {
	[ "${HAVE_KMOD:-0}" = 1 ] || {
		echo "no cryptoshim.ko (run-vm.sh --kmod)"
		exit 77
	}
	[ "${1:-}" = loaded ] && return
	if [ -d /sys/module/cryptoshim ]; then
		echo "(unloading cryptoshim left by an earlier test)"
		rmmod cryptoshim || fail "cannot unload the leftover module"
	fi
}

# Exec is slow under TCG (a /bin/true costs 0.1-0.2 s): the helpers below
# read files with bash builtins.

# sysfs_line FILE: the file's content, which must be exactly one line
# ending in a newline; fails otherwise.
sysfs_line() {
	local lines=() f=$1
	[ -r "$f" ] || fail "no $f"
	mapfile -t lines <"$f"
	[ ${#lines[@]} = 1 ] || fail "$f has ${#lines[@]} lines, want 1"
	IFS= read -r -d '' REPLY <"$f"
	[ "${REPLY: -1}" = $'\n' ] || fail "$f does not end in a newline"
	REPLY=${lines[0]}
}

# proc_crypto DRIVER FIELD: that field of /proc/crypto's entry for DRIVER
# (empty if there is none).
proc_crypto() {
	local key val drv="" found=""
	declare -A e=()
	# "name         : gcm(aes)": blanks around the colon are one separator
	while IFS=' :' read -r key val; do
		if [ -z "$key" ]; then
			[ "$drv" = "$1" ] && break
			e=() drv=""
			continue
		fi
		e[$key]=$val
		[ "$key" = driver ] && drv=$val
	done </proc/crypto
	[ "$drv" = "$1" ] && found=${e[$2]:-}
	echo "$found"
}

# Check the sysfs tree against the list of algs given in order ($@).
check_sysfs() {
	local want=$# i=0 a d prio drv dir n names=()
	[ -d $SYS ] || fail "no $SYS"
	sysfs_line $SYS/count
	[ "$REPLY" = "$want" ] || fail "count is $REPLY, want $want"
	for n in $SYS/instances/*; do
		names+=("${n##*/}")
	done
	[ "${names[*]}" = "$(seq -s ' ' 0 $((want - 1)))" ] ||
		fail "instances/ has ${names[*]}"
	for a in "$@"; do
		d=$SYS/instances/$i
		sysfs_line "$d/alg"
		[ "$REPLY" = "$a" ] || fail "$d/alg: $REPLY != $a"
		sysfs_line "$d/name"
		[ "$REPLY" = "pcrypt($a)" ] || fail "$d/name: $REPLY"
		sysfs_line "$d/driver"
		drv=$REPLY
		case $drv in
		pcrypt\(*\)) ;;
		*) fail "$d/driver: $drv is not a pcrypt driver" ;;
		esac
		prio=$(proc_crypto "$drv" priority)
		[ -n "$prio" ] || fail "driver $drv not in /proc/crypto"
		sysfs_line "$d/priority"
		[ "$REPLY" = "$prio" ] ||
			fail "$d/priority $REPLY != /proc/crypto $prio"
		[ "$(proc_crypto "$drv" name)" = "$a" ] ||
			fail "/proc/crypto name of $drv is not $a"
		sysfs_line "$d/cpumask_dir"
		dir=$REPLY
		[ -r "$dir/parallel_cpumask" ] && [ -r "$dir/serial_cpumask" ] ||
			fail "$d/cpumask_dir: no cpumasks in $dir"
		echo "$i: $a -> $drv prio $prio"
		i=$((i + 1))
	done
}

TWO_ALGS='gcm(aes),authenc(hmac(sha1),cbc(aes))'
THREE_ALGS='gcm(aes),authenc(hmac(sha1),cbc(aes)),rfc4106(gcm(aes))'

t_kmod_load() {
	need_kmod
	insmod "$KO" "algs=$THREE_ALGS" || fail "insmod failed: $(dmesg | tail -5)"
	check_sysfs 'gcm(aes)' 'authenc(hmac(sha1),cbc(aes))' 'rfc4106(gcm(aes))'
	sysfs_line /sys/module/cryptoshim/parameters/algs
	[ "$REPLY" = "$THREE_ALGS" ] || fail "parameters/algs reads $REPLY"
}

t_kmod_afalg() {
	need_kmod loaded
	local drv
	[ -r $SYS/instances/0/driver ] || fail "module not loaded"
	drv=$(<$SYS/instances/0/driver)
	"$VMSHARE/afalg-check" "$drv" 200 || fail "AF_ALG on $drv failed"
	# the instance runs through padata: its refcount in /proc/crypto
	# includes our pin; AF_ALG through the cra_name now picks pcrypt too
	"$VMSHARE/afalg-check" 'gcm(aes)' 20
}

t_kmod_pinned() {
	need_kmod loaded
	rmmod pcrypt 2>/dev/null && fail "pcrypt unloaded while pinned"
	lsmod | awk '$1 == "pcrypt" { print "pcrypt used by", $3; exit }'
	lsmod | awk '$1 == "pcrypt" && $3 >= 1 { ok = 1 } END { exit !ok }' ||
		fail "pcrypt has no users while cryptoshim pins instances"
}

t_kmod_unload() {
	need_kmod loaded
	local d drvs=()
	[ -r $SYS/instances/0/driver ] || fail "module not loaded"
	for d in $SYS/instances/*; do
		drvs+=("$(<"$d/driver")")
	done
	rmmod cryptoshim || fail "rmmod failed"
	[ ! -e $SYS ] || fail "$SYS still there after unload"
	for d in "${drvs[@]}"; do
		[ -z "$(proc_crypto "$d" name)" ] ||
			fail "$d still registered after unload"
		echo "$d gone from /proc/crypto"
	done
	rmmod pcrypt || fail "pcrypt still in use after unload"
	modprobe pcrypt
}

t_kmod_reload() {
	need_kmod
	insmod "$KO" || fail "insmod (default algs) failed"
	check_sysfs 'gcm(aes)'
	rmmod cryptoshim || fail "rmmod failed"
	insmod "$KO" "algs=$TWO_ALGS" || fail "second insmod failed"
	check_sysfs 'gcm(aes)' 'authenc(hmac(sha1),cbc(aes))'
	rmmod cryptoshim || fail "second rmmod failed"
}

t_kmod_bad_params() {
	need_kmod
	local p long
	long="gcm($(printf 'a%.0s' {1..200}))"
	for p in 'nosuch(aes)' 'cbc(aes)' 'gcm(aes' 'gcm(aes))' ',' '' \
		'gcm(aes),,gcm(aes)' 'gcm(aes);x' "$long"; do
		if insmod "$KO" "algs=$p" 2>/dev/null; then
			rmmod cryptoshim
			fail "insmod algs=$p loaded"
		fi
		[ ! -e $SYS ] || fail "$SYS left behind by a failed load ($p)"
		echo "refused: algs='${p:0:40}'"
	done
	dmesg | grep 'cryptoshim: [an]' | tail -10
	# one bad entry among good ones is skipped, the rest load
	insmod "$KO" 'algs=nosuch(aes),gcm(aes),cbc(aes)' ||
		fail "a bad entry failed the whole load"
	check_sysfs 'gcm(aes)'
	rmmod cryptoshim || fail "rmmod failed"
}

# An instance that existed before the module loaded is used, not owned:
# the module must leave it registered when it unloads.
t_kmod_preexisting() {
	need_kmod
	local drv
	insmod "$KO" || fail "insmod failed"
	drv=$(<$SYS/instances/0/driver)
	rmmod cryptoshim
	# create pcrypt(<inner>) from userspace: binding AF_ALG by its driver
	# name instantiates it (and it stays registered after the socket dies)
	"$VMSHARE/afalg-check" "$drv" >/dev/null || fail "AF_ALG bind of $drv failed"
	[ -n "$(proc_crypto "$drv" name)" ] || fail "$drv was not created"
	insmod "$KO" || fail "insmod over an existing instance failed"
	check_sysfs 'gcm(aes)'
	[ "$(<$SYS/instances/0/driver)" = "$drv" ] || fail "driver changed"
	rmmod cryptoshim
	[ -n "$(proc_crypto "$drv" name)" ] ||
		fail "unload removed $drv, which it did not create"
	echo "$drv kept after unload (not ours)"
}

# The boot set-up kmod-shim/README.md documents, taken from the README
# itself: the module under a modules tree, the modprobe.d lines, modprobe.
t_kmod_modprobe_conf() {
	need_kmod
	local v root conf line want deps=() files=() f in=0
	v=$(uname -r)
	root=$TMPDIR/modroot
	mkdir -p "$root/lib/modules/$v/updates" "$root/etc/modprobe.d"
	# a small tree: the softdeps and what they need, not all 4000 modules
	mapfile -t deps < <(modprobe --show-depends pcrypt
		modprobe --show-depends aesni_intel)
	for line in "${deps[@]}"; do
		f=${line#insmod }
		files+=("${f%% *}")
	done
	cp --parents "${files[@]}" /lib/modules/"$v"/modules.builtin* "$root" &&
		cp "$KO" "$root/lib/modules/$v/updates/" &&
		: >"$root/lib/modules/$v/modules.order" || fail "cannot copy modules"
	depmod -b "$root" "$v" || fail "depmod failed"

	# the README's /etc/modprobe.d/cryptoshim.conf block, as written there
	conf=$root/etc/modprobe.d/cryptoshim.conf
	: >"$conf"
	while IFS= read -r line; do
		case $line in
		"    # /etc/modprobe.d/cryptoshim.conf") in=1 ;;
		"") [ $in = 1 ] && break ;;
		"    "*) [ $in = 1 ] && echo "${line#    }" >>"$conf" ;;
		esac
	done <kmod-shim/README.md
	want=
	while read -r line; do
		case $line in "options cryptoshim algs="*) want=${line#*algs=} ;; esac
	done <"$conf"
	[ -n "$want" ] || fail "no options line found in kmod-shim/README.md"
	echo "README's modprobe.d:"
	echo "$(<"$conf")"

	mapfile -t deps < <(modprobe -d "$root" -C "$root/etc/modprobe.d" \
		--show-depends cryptoshim)
	printf '%s\n' "${deps[@]}"
	[[ ${deps[0]:-} == *pcrypt.ko* ]] || fail "softdep pcrypt not first"
	modprobe -d "$root" -C "$root/etc/modprobe.d" cryptoshim ||
		fail "modprobe cryptoshim failed"
	sysfs_line /sys/module/cryptoshim/parameters/algs
	[ "$REPLY" = "$want" ] || fail "options not applied: algs=$REPLY"
	split_algs "$want"
	check_sysfs "${ALGS[@]}"
	rmmod cryptoshim || fail "rmmod failed"
	rm -rf "$root"
}

# split_algs LIST: ALGS=(the names), split at the commas outside parentheses
split_algs() {
	local i c d=0 cur=""
	ALGS=()
	for ((i = 0; i < ${#1}; i++)); do
		c=${1:i:1}
		case $c in
		"(") d=$((d + 1)) ;;
		")") d=$((d - 1)) ;;
		",") if [ $d = 0 ]; then
			ALGS+=("$cur")
			cur=
			continue
		fi ;;
		esac
		cur+=$c
	done
	ALGS+=("$cur")
}

# The daemon, without CAP_NET_ADMIN, finds the module's instance (and
# runs GCM test case 4 on it); without the module it says why it cannot.
start_daemon() { # LOG [ARGS]: cryptod on $TMPDIR/d.sock, no CAP_NET_ADMIN
	local log=$1
	shift
	rm -f "$TMPDIR/d.sock"
	setpriv --bounding-set -net_admin --inh-caps -net_admin \
		"$BUILD/daemon/cryptod" --no-config -s "$TMPDIR/d.sock" -w 2 \
		"$@" >"$log" 2>&1 &
	DAEMON=$!
	local i
	for i in {1..300}; do
		[ -S "$TMPDIR/d.sock" ] && return 0
		kill -0 $DAEMON 2>/dev/null || break
		sleep 0.1
	done
	cat "$log"
	fail "cryptod did not start"
}

stop_daemon() {
	kill $DAEMON && wait $DAEMON
}

t_kmod_daemon() {
	need_kmod
	local ctl=$BUILD/cli/cryptoctl out
	[ -x "$BUILD/daemon/cryptod" ] && [ -x "$ctl" ] || {
		echo "no cryptod in $BUILD"
		exit 77
	}
	# no pcrypt instance left by earlier tests: unloading pcrypt drops them
	rmmod pcrypt 2>/dev/null
	modprobe pcrypt
	insmod "$KO" 'algs=gcm(aes)' || fail "insmod failed"
	start_daemon "$TMPDIR/d.log"
	grep 'kernel-pcrypt' "$TMPDIR/d.log"
	grep -q "kernel-pcrypt: aes-gcm -> $(<$SYS/instances/0/driver) .*cryptoshim.ko" \
		"$TMPDIR/d.log" || fail "the daemon did not use the module's instance"
	"$ctl" -s "$TMPDIR/d.sock" engines | grep -E '^aes-gcm +kernel-pcrypt +[a-z]+ +yes ' ||
		fail "cryptoctl engines: kernel-pcrypt aes-gcm not available"
	out=$(echo d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39 |
		xxd -r -p | "$ctl" -s "$TMPDIR/d.sock" encrypt -a aes-gcm \
			--engine kernel-pcrypt -k feffe9928665731c6d6a8f9467308308 \
			-i cafebabefacedbaddecaf888 \
			--aad feedfacedeadbeeffeedfacedeadbeefabaddad2 | xxd -p | tr -d '\n')
	[ "$out" = 42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e0915bc94fbc3221a5db94fae95ae7121a47 ] ||
		fail "GCM test case 4 on kernel-pcrypt: $out"
	echo "GCM test case 4 on kernel-pcrypt through the daemon: ok"
	stop_daemon
	rmmod cryptoshim || fail "rmmod failed"

	start_daemon "$TMPDIR/d.log"
	"$ctl" -s "$TMPDIR/d.sock" engines >"$TMPDIR/engines.txt"
	stop_daemon
	echo "--- without the module:"
	grep 'aes-gcm' "$TMPDIR/d.log"
	grep -q 'aes-gcm unavailable: .*load cryptoshim.ko' "$TMPDIR/d.log" ||
		fail "no reason given without the module"
	echo "--- without the module, kernel.pcrypt = create:"
	start_daemon "$TMPDIR/d.log" --set kernel.pcrypt=create
	stop_daemon
	grep 'aes-gcm' "$TMPDIR/d.log"
	grep -q 'aes-gcm unavailable: .*needs CAP_NET_ADMIN' "$TMPDIR/d.log" ||
		fail "no CAP_NET_ADMIN reason"
}

# ------------------------------------------------------------ the suite
if [ "${1:-}" = --run ]; then
	"$2"
	exit
fi
vmtest facts t_facts
vmtest afalg-autoload t_afalg_autoload
vmtest modules t_modules
vmtest afalg-gcm t_afalg_gcm
vmtest kmod-load t_kmod_load
vmtest kmod-afalg-pcrypt t_kmod_afalg
vmtest kmod-pinned t_kmod_pinned
vmtest kmod-unload t_kmod_unload
vmtest kmod-reload t_kmod_reload
vmtest kmod-bad-params t_kmod_bad_params
vmtest kmod-preexisting t_kmod_preexisting
vmtest kmod-modprobe-conf t_kmod_modprobe_conf
vmtest kmod-daemon t_kmod_daemon

# The kernel engine's tests: "name command args..." per line, $BUILD
# expanded, run from the repo root with CRYPTOD_VM=1.
LIST=$REPO/tests/vm/kernel-tests.list
if [ -r "$LIST" ]; then
	while read -r name cmd; do
		case $name in '' | '#'*) continue ;; esac
		cmd=${cmd//\$BUILD/$BUILD}
		# word splitting is intended: the list has no quoting
		# shellcheck disable=SC2086
		vmtest "$name" env CRYPTOD_VM=1 TMPDIR=/tmp BUILD="$BUILD" $cmd
	done <"$LIST"
fi

dmesg | grep -iE 'BUG|WARNING|Oops|cryptoshim' | tail -20 >"$VMSHARE/dmesg.txt"
if dmesg | grep -qE 'BUG:|WARNING:|Oops|general protection'; then
	echo "VMTEST FAIL kernel-log-clean"
	dmesg | grep -E -A5 'BUG:|WARNING:|Oops|general protection' | head -40 | sed 's/^/    /'
	FAILED=$((FAILED + 1))
else
	echo "VMTEST PASS kernel-log-clean"
fi
exit $((FAILED > 0))
