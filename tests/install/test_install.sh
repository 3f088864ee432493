#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'cmake --install' as a packager and as a user run it:
#  1. DESTDIR=... --prefix /usr: every file in its standard place (binaries,
#     libraries, headers, pkg-config, CMake package, units, sysusers,
#     tmpfiles, man pages, /etc/cryptod/cryptod.conf when the tree has
#     one), no @PLACEHOLDER@ left, paths inside naming /usr.
#  2. --prefix TMP: a client program built twice against the install tree,
#     with 'pkg-config --cflags --libs libcryptoclient' and with a CMake
#     project using find_package(cryptoclient) (shared and static), run
#     against a daemon started from the install tree: a NIST GCM vector and
#     a corrupted tag. find_package with a version too new must fail.
#
#   test_install.sh CMAKE BUILD_DIR SOURCE_DIR C_COMPILER [SANITIZE]
#
# Exit 0 when every check passed, 1 otherwise, 77 when pkg-config or the
# NIST vectors are missing.
set -u

CMAKE=$1
BUILD=$2
SRC=$3
CC_BIN=$4
SAN=${5:-}
HERE=$(cd "$(dirname "$0")" && pwd)

command -v pkg-config >/dev/null || { echo "skipped: pkg-config missing"; exit 77; }
read -r KEY IV PT AAD CT TAG < <(sh "$HERE/../common/nist_gcm_vector.sh")
[ -n "${TAG:-}" ] || { echo "skipped: no NIST GCM vector"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptod-install.XXXXXX") || exit 1
dpid=
cleanup()
{
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
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
# A sanitized library needs a sanitized program (the runtime comes first).
CFLAGS_SAN=
[ -n "$SAN" ] && CFLAGS_SAN="-fsanitize=$SAN -fno-omit-frame-pointer"

# ---- 1. The packager's install: DESTDIR and prefix /usr ----
dest=$tmp/dest
DESTDIR=$dest "$CMAKE" --install "$BUILD" --prefix /usr >"$tmp/i1.log" 2>&1 ||
	{ cat "$tmp/i1.log"; echo "FAIL: cmake --install (DESTDIR)"; exit 1; }
# The library directory is lib or lib/<multiarch>, as configured.
pc=$(cd "$dest/usr" && ls lib*/pkgconfig/libcryptoclient.pc lib/*/pkgconfig/libcryptoclient.pc 2>/dev/null | head -1)
libdir=${pc%/pkgconfig/libcryptoclient.pc}
[ -n "$pc" ] && ok || bad "libcryptoclient.pc not installed"
for f in sbin/cryptod bin/cryptoctl bin/cryptod-bench bin/cryptod-poolbench \
	"$libdir/libcryptoclient.so" "$libdir/libcryptoclient.so.0" "$libdir/libcryptoclient.a" \
	include/cryptoclient.h include/cryptod/ring_abi.h \
	"$libdir/cmake/cryptoclient/cryptoclientConfig.cmake" \
	"$libdir/cmake/cryptoclient/cryptoclientConfigVersion.cmake" \
	"$libdir/cmake/cryptoclient/cryptoclientTargets.cmake" \
	lib/systemd/system/cryptod.service lib/systemd/system/cryptod.socket \
	lib/systemd/system/cryptod-metrics.service lib/systemd/system/cryptod-metrics.socket \
	lib/sysusers.d/cryptod.conf lib/tmpfiles.d/cryptod.conf \
	share/man/man8/cryptod.8 share/man/man1/cryptoctl.1 \
	share/man/man3/libcryptoclient.3 share/man/man3/cc_enqueue_burst.3; do
	[ -e "$dest/usr/$f" ] && ok || bad "not installed: /usr/$f"
done
[ -x "$dest/usr/sbin/cryptod" ] && [ -x "$dest/usr/bin/cryptoctl" ] && ok ||
	bad "binaries not executable"
# The benchmark: cryptod-bench, a program that cryptoctl bench runs from
# beside itself, and cryptod-poolbench, a relative link to it.
[ -x "$dest/usr/bin/cryptod-bench" ] && [ ! -L "$dest/usr/bin/cryptod-bench" ] &&
	"$dest/usr/bin/cryptod-bench" --help 2>&1 | grep -q "^Usage: cryptoctl bench" && ok ||
	bad "/usr/bin/cryptod-bench is not the program of cryptoctl bench"
"$dest/usr/bin/cryptoctl" bench --help 2>&1 | grep -q "^Usage: cryptoctl bench" && ok ||
	bad "the installed cryptoctl bench does not run cryptod-bench"
[ "$(readlink "$dest/usr/bin/cryptod-poolbench")" = cryptod-bench ] &&
	"$dest/usr/bin/cryptod-poolbench" --help 2>&1 | grep -q "^Usage: cryptoctl bench" && ok ||
	bad "/usr/bin/cryptod-poolbench is not a link that runs cryptoctl bench pool"
if [ -f "$SRC/etc/cryptod.conf" ]; then
	[ -f "$dest/etc/cryptod/cryptod.conf" ] && ok ||
		bad "etc/cryptod.conf not installed as /etc/cryptod/cryptod.conf"
	# A second install keeps the operator's edits.
	echo "# edited" >>"$dest/etc/cryptod/cryptod.conf"
	DESTDIR=$dest "$CMAKE" --install "$BUILD" --prefix /usr >/dev/null 2>&1
	grep -q '^# edited$' "$dest/etc/cryptod/cryptod.conf" && ok ||
		bad "reinstall overwrote /etc/cryptod/cryptod.conf"
fi
left=$(grep -l '@[A-Z_]*@' "$dest/usr/lib/systemd/system/"* "$dest/usr/share/man/"man*/* \
	"$dest/usr/$pc" 2>/dev/null)
[ -z "$left" ] && ok || bad "placeholders left in: $left"
grep -qx 'ExecStart=/usr/sbin/cryptod' "$dest/usr/lib/systemd/system/cryptod.service" && ok ||
	bad "cryptod.service does not start /usr/sbin/cryptod"
grep -qx 'ExecStart=/usr/bin/cryptoctl stats --serve' "$dest/usr/lib/systemd/system/cryptod-metrics.service" && ok ||
	bad "cryptod-metrics.service does not start /usr/bin/cryptoctl stats --serve"
grep -qx 'prefix=/usr' "$dest/usr/$pc" && ok || bad "pkg-config prefix is not /usr"
grep -q "$dest" -r "$dest/usr/lib/systemd" "$dest/usr/share/man" "$dest/usr/$pc" &&
	bad "DESTDIR leaked into installed files" || ok

# ---- 2. A user's install in a private prefix, and clients built on it ----
prefix=$tmp/prefix
"$CMAKE" --install "$BUILD" --prefix "$prefix" >"$tmp/i2.log" 2>&1 ||
	{ cat "$tmp/i2.log"; echo "FAIL: cmake --install --prefix"; exit 1; }
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
flags=$(pkg-config --cflags --libs libcryptoclient) && ok || bad "pkg-config libcryptoclient"
echo "pkg-config: $flags"
case "$flags" in
*"-I$prefix/include"*"-L$prefix/$libdir"* | *"-L$prefix/$libdir"*"-I$prefix/include"*) ok ;;
*) bad "pkg-config flags do not point into $prefix: $flags" ;;
esac
# shellcheck disable=SC2086
"$CC_BIN" $CFLAGS_SAN -Wall -Wextra -Werror -o "$tmp/client_pc" "$HERE/client/gcm_client.c" \
	$flags 2>"$tmp/cc.log" && ok || { bad "build with pkg-config:"; cat "$tmp/cc.log" >&2; }

"$CMAKE" -S "$HERE/client" -B "$tmp/cbuild" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_COMPILER="$CC_BIN" -DCMAKE_C_FLAGS="$CFLAGS_SAN" \
	-DCMAKE_EXE_LINKER_FLAGS="$CFLAGS_SAN" >"$tmp/cmake.log" 2>&1 &&
	"$CMAKE" --build "$tmp/cbuild" >>"$tmp/cmake.log" 2>&1 && ok ||
	{ bad "build with find_package(cryptoclient):"; tail -30 "$tmp/cmake.log" >&2; }
grep -q "cryptoclient [0-9.]* from $prefix/" "$tmp/cmake.log" && ok ||
	bad "find_package did not find the install tree"
if "$CMAKE" -S "$HERE/client" -B "$tmp/cbuild9" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_COMPILER="$CC_BIN" -DWANT_VERSION=9.0 >"$tmp/cmake9.log" 2>&1; then
	bad "find_package(cryptoclient 9.0) succeeded against $(grep -o 'cryptoclient [0-9.]*' "$tmp/cmake9.log")"
else
	ok
fi

# The daemon from the install tree.
sock=$tmp/cryptod.sock
"$prefix/sbin/cryptod" --socket "$sock" --workers 1 >"$tmp/daemon.log" 2>&1 &
dpid=$!
for _ in $(seq 300); do
	grep -q "listening on" "$tmp/daemon.log" && break
	sleep 0.1
done
"$prefix/bin/cryptoctl" --socket "$sock" ping >/dev/null && ok || bad "installed cryptoctl ping"

run_client() # LABEL BINARY [expected CT]
{
	local out
	if out=$(LD_LIBRARY_PATH=$prefix/$libdir "$2" "$sock" "$KEY" "$IV" "$PT" "$AAD" "${3:-$CT}" "$TAG" 2>&1); then
		echo "$1: $out"
		return 0
	fi
	echo "$1: $out"
	return 1
}
run_client "pkg-config build" "$tmp/client_pc" && ok || bad "pkg-config client"
run_client "find_package build" "$tmp/cbuild/gcm_client" && ok || bad "find_package client"
run_client "find_package static" "$tmp/cbuild/gcm_client_static" && ok || bad "find_package static client"
# The shared clients must really use the installed library.
LD_LIBRARY_PATH=$prefix/$libdir ldd "$tmp/client_pc" | grep -q "$prefix/$libdir/libcryptoclient.so.0" && ok ||
	bad "the pkg-config client does not load $prefix/$libdir/libcryptoclient.so.0"
ldd "$tmp/cbuild/gcm_client" | grep -q "$prefix/$libdir/libcryptoclient.so.0" && ok ||
	bad "the find_package client does not load the installed library (RPATH)"
# And the check can fail: a wrong expected ciphertext is caught.
wrong=$(printf '%s' "$CT" | sed 's/^./0/;t;s/^/0/')
[ "$wrong" = "$CT" ] && wrong=$(printf '%s' "$CT" | sed 's/^./1/')
run_client "wrong vector" "$tmp/client_pc" "$wrong" >/dev/null && bad "a wrong ciphertext passed" || ok

# The man pages are found where they were installed.
if command -v man >/dev/null; then
	# man -w follows the .so link to the group page itself.
	case "$(MANPATH=$prefix/share/man man -w cc_disconnect 2>/dev/null)" in
	"$prefix/share/man/man3/"*) ok ;;
	*) bad "man -w cc_disconnect does not find the installed page" ;;
	esac
	MANPATH=$prefix/share/man MANWIDTH=80 man cc_disconnect 2>/dev/null | grep -q 'cc_default_socket_path' && ok ||
		bad "man cc_disconnect does not show cc_connect(3)"
	MANPATH=$prefix/share/man MANWIDTH=80 man cc_submit 2>/dev/null | grep -q 'struct cc_op' && ok ||
		bad "man cc_submit does not show cc_enqueue_burst(3) with struct cc_op"
	MANPATH=$prefix/share/man MANWIDTH=80 man libcryptoclient 2>/dev/null | grep -q 'cc_alg_name(3)' && ok ||
		bad "man libcryptoclient does not list the pages"
fi

kill -TERM "$dpid"
wait "$dpid"
[ $? -eq 0 ] && ok || bad "installed daemon: exit status after SIGTERM"
dpid=

echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
