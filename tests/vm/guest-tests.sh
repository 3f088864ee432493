#!/bin/bash
# The VM suite, run by tests/vm/init.sh inside the guest: as root, chrooted
# into the host's root filesystem (read-only), with tmpfs on /tmp, /run,
# /dev/shm and /var/tmp, and the writable share at $VMSHARE.
#
# Environment (from run-vm.sh): REPO (the checkout), BUILD (build directory,
# read-only here), VMSHARE (writable: cryptoshim.ko, afalg-check, results),
# HAVE_KMOD (1 if $VMSHARE/cryptoshim.ko is there), VMTEST_ONLY (if set, a
# regex: tests whose names do not match are left out silently).
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
	local name=$1 out rc t0 t1
	shift
	# facts and modules set the guest up: they always run
	if [ -n "${VMTEST_ONLY:-}" ] && ! [[ $name =~ $VMTEST_ONLY ]] &&
		[ "$name" != facts ] && [ "$name" != modules ]; then
		return 0
	fi
	out=$(mktemp)
	t0=$(date +%s.%N)
	# a shell function runs in a fresh copy of this script (timeout
	# needs a program)
	declare -F "$1" >/dev/null && set -- bash "$SELF" --run "$@"
	timeout -k 5 "$TEST_TIMEOUT" "$@" >"$out" 2>&1 </dev/null
	rc=$?
	t1=$(date +%s.%N)
	local took
	took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	case $rc in
	0) echo "VMTEST PASS $name (${took} s)" ;;
	77) echo "VMTEST SKIP $name: $(tail -1 "$out")" ;;
	*)
		[ $rc = 124 ] && echo "  (timed out after $TEST_TIMEOUT s)" >>"$out"
		echo "VMTEST FAIL $name (exit $rc, ${took} s)"
		sed 's/^/    /' "$out" | tail -40
		FAILED=$((FAILED + 1))
		;;
	esac
	rm -f "$out"
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
	[ "$(cat /proc/sys/crypto/fips_enabled)" = 0 ] ||
		fail "FIPS mode is on: it restricts the algorithm list"
	[ "$(cat /proc/sys/kernel/modules_disabled)" = 0 ] ||
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
	for m in "${CRYPTO_MODS[@]}"; do
		# built-in ones (cbc, hmac, sha*) are fine too
		modprobe "$m" 2>&1 || grep -q "/$m.ko" \
			"/lib/modules/$(uname -r)/modules.builtin" ||
			fail "modprobe $m failed"
	done
	grep -q '^name *: gcm(aes)' /proc/crypto || {
		# the template registers on first use: instantiate it
		"$VMSHARE/afalg-check" 'gcm(aes)' >/dev/null
	}
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

# /proc/crypto field $2 of the entry whose driver is $1
proc_crypto() {
	awk -v d="$1" -v f="$2" '
		/^$/ { if (drv == d) exit; delete e; drv = "" }
		{ e[$1] = $3 }
		$1 == "driver" { drv = $3 }
		END { if (drv == d && f in e) print e[f] }' /proc/crypto
}

# Check the sysfs tree against the list of algs given in order ($@).
check_sysfs() {
	local want=$# i=0 a d prio
	[ -d $SYS ] || fail "no $SYS"
	[ "$(cat $SYS/count)" = "$want" ] ||
		fail "count is $(cat $SYS/count), want $want"
	[ "$(ls $SYS/instances | sort -n | tr '\n' ' ')" = \
		"$(seq -s ' ' 0 $((want - 1))) " ] ||
		fail "instances/ has $(ls $SYS/instances | tr '\n' ' ')"
	for a in "$@"; do
		d=$SYS/instances/$i
		[ "$(cat "$d/alg")" = "$a" ] || fail "$d/alg: $(cat "$d/alg") != $a"
		[ "$(cat "$d/name")" = "pcrypt($a)" ] || fail "$d/name: $(cat "$d/name")"
		case $(cat "$d/driver") in
		pcrypt\(*\)) ;;
		*) fail "$d/driver: $(cat "$d/driver") is not a pcrypt driver" ;;
		esac
		prio=$(proc_crypto "$(cat "$d/driver")" priority)
		[ -n "$prio" ] || fail "driver $(cat "$d/driver") not in /proc/crypto"
		[ "$(cat "$d/priority")" = "$prio" ] ||
			fail "$d/priority $(cat "$d/priority") != /proc/crypto $prio"
		[ "$(proc_crypto "$(cat "$d/driver")" name)" = "$a" ] ||
			fail "/proc/crypto name of $(cat "$d/driver") is not $a"
		[ -r "$(cat "$d/cpumask_dir")/parallel_cpumask" ] &&
			[ -r "$(cat "$d/cpumask_dir")/serial_cpumask" ] ||
			fail "$d/cpumask_dir: no cpumasks in $(cat "$d/cpumask_dir")"
		# every file exactly one line
		for f in alg name driver priority cpumask_dir; do
			[ "$(wc -l <"$d/$f")" = 1 ] || fail "$d/$f is not one line"
		done
		echo "$i: $a -> $(cat "$d/driver") prio $(cat "$d/priority")"
		i=$((i + 1))
	done
}

TWO_ALGS='gcm(aes),authenc(hmac(sha1),cbc(aes))'
THREE_ALGS='gcm(aes),authenc(hmac(sha1),cbc(aes)),rfc4106(gcm(aes))'

t_kmod_load() {
	need_kmod
	insmod "$KO" "algs=$THREE_ALGS" || fail "insmod failed: $(dmesg | tail -5)"
	check_sysfs 'gcm(aes)' 'authenc(hmac(sha1),cbc(aes))' 'rfc4106(gcm(aes))'
	[ "$(cat /sys/module/cryptoshim/parameters/algs)" = "$THREE_ALGS" ] ||
		fail "parameters/algs reads $(cat /sys/module/cryptoshim/parameters/algs)"
}

t_kmod_afalg() {
	need_kmod loaded
	local drv
	drv=$(cat $SYS/instances/0/driver) || fail "module not loaded"
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
	local drv
	drv=$(cat $SYS/instances/0/driver) || fail "module not loaded"
	rmmod cryptoshim || fail "rmmod failed"
	[ ! -e $SYS ] || fail "$SYS still there after unload"
	[ -z "$(proc_crypto "$drv" name)" ] ||
		fail "$drv still registered after unload"
	echo "$drv gone from /proc/crypto"
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
	long="gcm($(printf 'a%.0s' $(seq 200)))"
	for p in 'nosuch(aes)' 'cbc(aes)' 'gcm(aes' 'gcm(aes))' ',' '' \
		'gcm(aes),,gcm(aes)' 'gcm(aes);x' "$long"; do
		if insmod "$KO" "algs=$p" 2>/dev/null; then
			rmmod cryptoshim
			fail "insmod algs=$p loaded"
		fi
		[ ! -e $SYS ] || fail "$SYS left behind by a failed load ($p)"
		echo "algs='${p:0:40}' refused: $(dmesg | grep cryptoshim | tail -1)"
	done
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
	drv=$(cat $SYS/instances/0/driver)
	rmmod cryptoshim
	# create pcrypt(<inner>) from userspace: binding AF_ALG by its driver
	# name instantiates it (and it stays registered after the socket dies)
	"$VMSHARE/afalg-check" "$drv" >/dev/null || fail "AF_ALG bind of $drv failed"
	[ -n "$(proc_crypto "$drv" name)" ] || fail "$drv was not created"
	insmod "$KO" || fail "insmod over an existing instance failed"
	check_sysfs 'gcm(aes)'
	[ "$(cat $SYS/instances/0/driver)" = "$drv" ] || fail "driver changed"
	rmmod cryptoshim
	[ -n "$(proc_crypto "$drv" name)" ] ||
		fail "unload removed $drv, which it did not create"
	echo "$drv kept after unload (not ours)"
}

# The boot set-up kmod-shim/README.md documents, taken from the README
# itself: the module under a modules tree, the modprobe.d lines, modprobe.
t_kmod_modprobe_conf() {
	need_kmod
	local v root conf want m f
	v=$(uname -r)
	root=$(mktemp -d)
	mkdir -p "$root/lib/modules/$v/updates" "$root/etc/modprobe.d"
	cp "$KO" "$root/lib/modules/$v/updates/"
	# a small tree: the softdeps and what they need, not all 4000 modules
	for m in pcrypt aesni_intel; do
		modprobe --show-depends "$m" | while read -r _ f _; do
			mkdir -p "$root$(dirname "$f")"
			cp "$f" "$root$f"
		done
	done
	cp /lib/modules/"$v"/modules.builtin* "$root/lib/modules/$v/"
	touch "$root/lib/modules/$v/modules.order"
	depmod -b "$root" "$v" || fail "depmod failed"
	conf=$root/etc/modprobe.d/cryptoshim.conf
	sed -n '\|^    # /etc/modprobe.d/cryptoshim.conf|,/^$/p' kmod-shim/README.md |
		sed -e 's/^    //' -e '/^#/d' -e '/^$/d' >"$conf"
	grep -q '^options cryptoshim algs=' "$conf" ||
		fail "no options line found in kmod-shim/README.md"
	echo "README's modprobe.d:"
	sed 's/^/  /' "$conf"
	modprobe -d "$root" -C "$root/etc/modprobe.d" --show-depends cryptoshim
	modprobe -d "$root" -C "$root/etc/modprobe.d" --show-depends cryptoshim |
		head -1 | grep -q pcrypt || fail "softdep pcrypt not first"
	modprobe -d "$root" -C "$root/etc/modprobe.d" cryptoshim ||
		fail "modprobe cryptoshim failed"
	want=$(sed -n 's/^options cryptoshim algs=//p' "$conf")
	[ "$(cat /sys/module/cryptoshim/parameters/algs)" = "$want" ] ||
		fail "options not applied: algs=$(cat /sys/module/cryptoshim/parameters/algs)"
	IFS=' ' read -r -a want < <(echo "$want" |
		awk '{ d = 0; s = ""
			for (i = 1; i <= length($0); i++) {
				c = substr($0, i, 1)
				if (c == "(") d++
				if (c == ")") d--
				if (c == "," && d == 0) c = " "
				s = s c
			}
			print s }')
	check_sysfs "${want[@]}"
	rmmod cryptoshim || fail "rmmod failed"
	rm -rf "$root"
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
