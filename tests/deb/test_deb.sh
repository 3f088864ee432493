#!/usr/bin/env bash
# Build the Debian packages from a copy of the tracked files (what a clean
# clone would hold, with uncommitted edits), run lintian, check what each
# package holds and that the extracted binaries run.
#
#   tests/deb/test_deb.sh [OUT_DIR]     (default: build-deb)
#
# The .debs are left in OUT_DIR for tests/boot/run-boot.sh. Exits 0 only
# if every check passed; prints one line per failed check.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$REPO/build-deb}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
fails=0 checks=0
ok() { checks=$((checks + 1)); }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL: $*"; }

for tool in dpkg-buildpackage dh lintian dpkg-deb; do
	command -v $tool >/dev/null || { echo "test_deb: $tool missing (scripts/deps.sh)" >&2; exit 1; }
done
VERSION=$(sed -n '/^project.cryptod VERSION/{s/.* VERSION //;s/ .*//;p;}' "$REPO/CMakeLists.txt")
ARCH=$(dpkg --print-architecture)

work=$(mktemp -d /tmp/cryptod-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$work/cryptod-$VERSION
mkdir -p "$src"
(cd "$REPO" && git ls-files -z | while IFS= read -r -d '' f; do
	[ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf -) | tar -C "$src" -xf -

# The version check of debian/rules refuses a changelog that disagrees with
# CMakeLists.txt (before anything is built).
if (cd "$src" && make -s -f debian/rules DEB_VERSION_UPSTREAM=9.9.9 override_dh_auto_configure) \
	>"$work/vcheck.log" 2>&1; then
	bad "debian/rules accepted changelog version 9.9.9 against CMake $VERSION"
else
	grep -q "CMakeLists.txt says $VERSION" "$work/vcheck.log" && ok ||
		bad "version mismatch refused without saying why: $(tail -1 "$work/vcheck.log")"
fi

t0=$(date +%s)
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
	tail -40 "$work/build.log"
	echo "FAIL: dpkg-buildpackage -us -uc -b (log above)"
	exit 1
fi
t1=$(date +%s)
echo "test_deb: dpkg-buildpackage -us -uc -b: $((t1 - t0)) s"
rm -f "$OUT"/*.deb "$OUT"/*.changes "$OUT"/*.buildinfo
mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$OUT"/
changes=$OUT/cryptod_${VERSION}_$ARCH.changes

# lintian: no error and no warning; the notes it still gives are explained
# in debian/README.source.
lintian --allow-root --pedantic -I --fail-on error,warning "$changes" >"$work/lintian.log" 2>&1 &&
	ok || bad "lintian: $(grep -E '^[EW]:' "$work/lintian.log" | head -20)"
sed 's/^/  lintian: /' "$work/lintian.log"

deb() { echo "$OUT/${1}_${VERSION}_${2:-$ARCH}.deb"; }
has() { # package path...: each path is in the package
	local p=$1 f list
	shift
	list=$(dpkg-deb -c "$(deb "$p" "${ARCH_OF:-}")" | awk '{ print substr($6, 2) }')
	for f in "$@"; do
		grep -qx -- "$f" <<<"$list" && ok || bad "$p does not hold $f"
	done
}
ML=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
has cryptod /usr/sbin/cryptod /lib/systemd/system/cryptod.service \
	/lib/systemd/system/cryptod.socket /lib/systemd/system/cryptod-metrics.socket \
	/lib/systemd/system/cryptod-metrics.service /usr/lib/sysusers.d/cryptod.conf \
	/usr/lib/tmpfiles.d/cryptod.conf /etc/cryptod/cryptod.conf \
	/usr/share/man/man8/cryptod.8.gz /usr/share/man/man5/cryptod.conf.5.gz \
	/usr/share/doc/cryptod/examples/cryptod.service.d/pcrypt.conf
has cryptod /etc/init.d/cryptod
has cryptoctl /usr/bin/cryptoctl /usr/share/man/man1/cryptoctl.1.gz \
	/usr/bin/cryptod-bench /usr/bin/cryptod-poolbench \
	/usr/share/bash-completion/completions/cryptoctl
# README.Debian (what purge keeps, where the KEK goes, running without
# systemd), compressed by dh_compress when it is large
grep -Eq ' \./usr/share/doc/cryptod/README\.Debian(\.gz)?$' <<<"$(dpkg-deb -c "$(deb cryptod)")" &&
	ok || bad "cryptod does not hold /usr/share/doc/cryptod/README.Debian"
# cryptod-poolbench is what the docs say: a link to cryptod-bench
grep -Eq ' \./usr/bin/cryptod-poolbench -> cryptod-bench$' <<<"$(dpkg-deb -c "$(deb cryptoctl)")" &&
	ok || bad "cryptoctl's cryptod-poolbench is not a link to cryptod-bench"
has libcryptoclient0 /usr/lib/$ML/libcryptoclient.so.0 /usr/lib/$ML/libcryptoclient.so.$VERSION
has libcryptoclient-dev /usr/include/cryptoclient.h /usr/lib/$ML/libcryptoclient.a \
	/usr/lib/$ML/libcryptoclient.so /usr/lib/$ML/pkgconfig/libcryptoclient.pc \
	/usr/lib/$ML/cmake/cryptoclient/cryptoclientConfig.cmake \
	/usr/share/man/man3/libcryptoclient.3.gz /usr/share/man/man3/cc_connect.3.gz \
	/usr/share/man/man3/cc_disconnect.3.gz /usr/share/man/man3/cc_alg_name.3.gz \
	/usr/share/man/man3/cc_enqueue_burst.3.gz /usr/share/man/man3/cc_submit.3.gz
has cryptod-openssl-provider /usr/lib/$ML/ossl-modules/cryptod.so \
	/usr/share/cryptod/cryptod-provider.cnf \
	/usr/share/cryptod/cryptod-provider-tls.cnf
ARCH_OF=all has cryptoshim-dkms /usr/src/cryptoshim-$VERSION/dkms.conf \
	/usr/src/cryptoshim-$VERSION/cryptoshim.c /usr/src/cryptoshim-$VERSION/Kbuild

ctl=$work/ctl
dpkg-deb -e "$(deb cryptod)" "$ctl"
grep -qx /etc/cryptod/cryptod.conf "$ctl/conffiles" && ok || bad "cryptod.conf is not a conffile"
grep -q "systemd-sysusers.* cryptod.conf" "$ctl/postinst" && ok || bad "postinst does not create the user"
grep -q "deb-systemd-helper enable 'cryptod.socket'" "$ctl/postinst" && ok ||
	bad "postinst does not enable cryptod.socket"
grep -q "deb-systemd-invoke .*start.* 'cryptod.service'" "$ctl/postinst" &&
	bad "postinst starts cryptod.service (the socket should)" || ok
# The exporter is opt-in: enabled again on upgrade only where the admin
# enabled it (debhelper's "dont-enable" form), never started.
grep -q "if deb-systemd-helper debian-installed 'cryptod-metrics.socket'" "$ctl/postinst" && ok ||
	bad "postinst enables cryptod-metrics.socket (it is opt-in)"
grep -q "deb-systemd-invoke .*start.*cryptod-metrics" "$ctl/postinst" &&
	bad "postinst starts the exporter (it is opt-in)" || ok
grep -q "update-rc.d cryptod defaults" "$ctl/postinst" && ok ||
	bad "postinst does not register /etc/init.d/cryptod"

# postrm purge keeps the sealed keys and says what it kept and how to
# remove it; with nothing kept it says nothing. Run on a fake root
# ($DPKG_ROOT) with the system tools it calls stubbed out.
droot=$work/droot
mkdir -p "$droot/var/lib/cryptod/keys" "$droot/etc/cryptod-kek" "$droot/var/log" "$work/stubs"
echo sealed >"$droot/var/lib/cryptod/keys/db.key"
echo kek >"$droot/etc/cryptod-kek/kek"
echo log >"$droot/var/log/cryptod.log"
for t in deb-systemd-helper systemctl update-rc.d deb-systemd-invoke; do
	printf '#!/bin/sh\nexit 0\n' >"$work/stubs/$t"
	chmod +x "$work/stubs/$t"
done
purge() { DPKG_ROOT=$droot PATH=$work/stubs:$PATH sh "$ctl/postrm" purge; }
out=$(purge 2>&1) && ok || bad "postrm purge failed: $out"
grep -q "purge kept these" <<<"$out" && ok || bad "postrm purge gives no notice of the kept keys: $out"
grep -q "rm -rf /var/lib/cryptod /etc/cryptod-kek" <<<"$out" && ok ||
	bad "the purge notice does not name the key directory and the KEK to remove: $out"
[ -f "$droot/var/lib/cryptod/keys/db.key" ] && ok || bad "postrm purge removed the sealed keys"
[ ! -e "$droot/var/log/cryptod.log" ] && ok || bad "postrm purge left /var/log/cryptod.log"
rm -rf "$droot/var/lib/cryptod/keys/db.key" "$droot/etc/cryptod-kek"
out=$(purge 2>&1) && ok || bad "postrm purge (nothing kept) failed: $out"
[ -z "$out" ] && ok || bad "postrm purge with nothing kept still prints: $out"
[ ! -e "$droot/var/lib/cryptod" ] && ok || bad "postrm purge left an empty /var/lib/cryptod"

dpkg-deb -f "$(deb cryptoctl)" Depends | grep -q "libcryptoclient0 (>= $VERSION)" && ok ||
	bad "cryptoctl does not depend on libcryptoclient0 (>= $VERSION): $(dpkg-deb -f "$(deb cryptoctl)" Depends)"
dpkg-deb -f "$(deb cryptoshim-dkms all)" Depends | grep -q dkms && ok || bad "cryptoshim-dkms does not depend on dkms"

# The symbols file: every name of the version script, at its node.
dpkg-deb -e "$(deb libcryptoclient0)" "$work/lib"
sym=$work/lib/symbols
while read -r node name; do
	grep -q "^ $name@$node $VERSION\$" "$sym" && ok || bad "symbols file lacks $name@$node"
done < <(awk '/^[A-Z][A-Z0-9_.]* *\{/ { n = $1; next }
	n != "" && /^[ \t]*cc_[a-z0-9_]*;/ { s = $1; sub(/;/, "", s); print n, s }' \
	"$REPO/client-lib/libcryptoclient.map")
[ "$(grep -c '^ cc_' "$sym")" = "$(grep -c '^[[:space:]]*cc_[a-z0-9_]*;' "$REPO/client-lib/libcryptoclient.map")" ] &&
	ok || bad "symbols file and version script list different numbers of symbols"

# The extracted packages run: the daemon checks its shipped configuration,
# refuses a broken one, and a client builds against the -dev package.
x=$work/root
for p in cryptod cryptoctl libcryptoclient0 libcryptoclient-dev; do
	dpkg-deb -x "$(deb $p)" "$x"
done
export LD_LIBRARY_PATH=$x/usr/lib/$ML
out=$("$x/usr/sbin/cryptod" --check-config --config "$x/etc/cryptod/cryptod.conf" 2>&1) && ok ||
	bad "the packaged daemon refuses the packaged configuration: $out"
{ cat "$x/etc/cryptod/cryptod.conf"; echo "workers = abc"; } >"$work/broken.conf"
"$x/usr/sbin/cryptod" --check-config --config "$work/broken.conf" >/dev/null 2>&1 &&
	bad "the packaged daemon accepts 'workers = abc'" || ok
"$x/usr/bin/cryptoctl" --version 2>&1 | grep -q "$VERSION" && ok || bad "cryptoctl --version does not say $VERSION"
cat >"$work/client.c" <<'C'
#include <cryptoclient.h>
#include <stdio.h>
int main(void)
{
	char path[256];
	if (cc_default_socket_path(path, sizeof(path)))
		return 1;
	printf("%s\n", path);
	return 0;
}
C
# the extracted tree stands in for /usr
sed -i "s|^prefix=/usr\$|prefix=$x/usr|" "$x/usr/lib/$ML/pkgconfig/libcryptoclient.pc"
pc_flags=$(PKG_CONFIG_PATH=$x/usr/lib/$ML/pkgconfig pkg-config \
	--cflags --libs libcryptoclient 2>&1) || bad "pkg-config libcryptoclient: $pc_flags"
# shellcheck disable=SC2086 # the flags are words
if cc -o "$work/client" "$work/client.c" $pc_flags -Wl,-rpath,"$x/usr/lib/$ML" >"$work/cc.log" 2>&1; then
	"$work/client" | grep -q cryptod.sock && ok || bad "the client built against the -dev package does not run"
else
	bad "a client does not build with pkg-config against the -dev package: $(head -3 "$work/cc.log")"
fi

# cryptoshim-dkms: dkms.conf names this version, and its sources build the
# module with the make line DKMS runs, against the newest kernel headers
# here. (Not "dkms build" itself: it would create a module-signing key in
# /var/lib/dkms on this machine.)
dpkg-deb -x "$(deb cryptoshim-dkms all)" "$work/dkms"
dk=$work/dkms/usr/src/cryptoshim-$VERSION
grep -qx "PACKAGE_VERSION=\"$VERSION\"" "$dk/dkms.conf" && ok ||
	bad "dkms.conf: $(grep PACKAGE_VERSION "$dk/dkms.conf")"
kdir=$(ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -1)
if [ -n "$kdir" ]; then
	kernel_source_dir=$kdir dkms_tree=$work/dkms-tree PACKAGE_NAME=cryptoshim PACKAGE_VERSION=$VERSION
	mkdir -p "$work/dkms-tree/cryptoshim/$VERSION"
	cp -r "$dk" "$work/dkms-tree/cryptoshim/$VERSION/build"
	# shellcheck disable=SC1090 # MAKE[0] as dkms.conf spells it
	mk=$(. "$dk/dkms.conf" && eval "echo \"${MAKE[0]}\"")
	if (cd "$work/dkms-tree/cryptoshim/$VERSION/build" && eval "$mk") >"$work/kmod.log" 2>&1 &&
		[ -f "$work/dkms-tree/cryptoshim/$VERSION/build/cryptoshim.ko" ]; then
		ok
	else
		bad "cryptoshim-dkms sources do not build against $kdir: $(tail -3 "$work/kmod.log")"
	fi
else
	echo "test_deb: no kernel headers here; the DKMS sources are not built"
fi

echo "test_deb: $((checks - fails))/$checks checks passed; packages in $OUT"
[ "$fails" = 0 ]
