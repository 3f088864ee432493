#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The EXAMPLES of the library's man pages are programs: each .EX/.EE block
# of a section 3 page is extracted (groff escapes undone), compiled with
# the flags an installed libcryptoclient needs (-I include dirs, -l the
# library, -Wall -Wextra -Werror) and run against a private cryptod, where
# it must exit 0 (the examples check their results against published
# vectors). A page whose EXAMPLES section holds no program fails, and so
# does the extraction when a broken program is planted.
#
#   test_man_examples.sh CRYPTOD CRYPTOCTL SOURCE_DIR LIBCRYPTOCLIENT [CC [SANITIZE]]
#
# SANITIZE: the build's sanitizers (CRYPTOD_SANITIZE), which a program
# linked with a sanitized library needs too.
#
# Exit 0 when every example compiled and ran, 1 otherwise, 77 without a
# C compiler.
set -u

DAEMON=$1
CTL=$2
SRC=$3
LIB=$4
CC=${5:-${CC:-cc}}
SAN=${6:-}
CFLAGS_SAN=
[ -n "$SAN" ] && CFLAGS_SAN="-fsanitize=$SAN -fno-omit-frame-pointer"
command -v "$CC" >/dev/null || { echo "skipped: no C compiler ($CC)"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptod-manex.XXXXXX") || exit 1
dpid=
cleanup()
{
	if [ -n "$dpid" ]; then
		kill -KILL "$dpid" 2>/dev/null
		wait "$dpid" 2>/dev/null
	fi
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

# extract PAGE OUTPREFIX: every .EX/.EE block of the EXAMPLES section to
# OUTPREFIX.N.c, groff's escapes undone; prints how many.
extract()
{
	awk -v out="$2" '
		/^\.SH / { inex = ($0 ~ /^\.SH "?EXAMPLES?"?$/); next }
		inex && /^\.EX/ { n++; f = out "." n ".c"; code = 1; next }
		inex && /^\.EE/ { code = 0; close(f); next }
		code {
			l = $0
			gsub(/\\-/, "-", l); gsub(/\\\(dq/, "\"", l)
			gsub(/\\\(aq/, "\047", l); gsub(/\\\(ha/, "^", l)
			gsub(/\\\(ti/, "~", l); gsub(/\\&/, "", l)
			gsub(/\\e/, "\\", l)
			print l > f
		}
		END { print n + 0 }' "$1"
}
# build SOURCE: compile and link as an installed program would.
build()
{
	# shellcheck disable=SC2086 # CFLAGS_SAN is a list
	"$CC" -Wall -Wextra -Werror $CFLAGS_SAN -o "${1%.c}" "$1" \
		-I "$SRC/client-lib/include" -I "$SRC/include" \
		-L "$(dirname "$LIB")" -lcryptoclient -Wl,-rpath,"$(dirname "$LIB")" \
		2>"${1%.c}.log"
}

# The extraction and the compile can fail: a planted page with a program
# that does not compile must be caught.
printf '.TH X 3\n.SH EXAMPLES\n.EX\nint main(void) { return undeclared; }\n.EE\n' >"$tmp/bad.3"
[ "$(extract "$tmp/bad.3" "$tmp/bad")" = 1 ] && ok || bad "no example extracted from a planted page"
build "$tmp/bad.1.c" && bad "a program that cannot compile compiled" || ok

# A private daemon, with a key-encryption key so that the named-key
# examples run (as root here, the caller is an administrator).
mkdir -m 0700 "$tmp/creds"
head -c 32 /dev/urandom >"$tmp/creds/kek"
chmod 0400 "$tmp/creds/kek"
sock=$tmp/cryptod.sock
CREDENTIALS_DIRECTORY=$tmp/creds "$DAEMON" --socket "$sock" --workers 2 \
	--set keys.kek=credential:kek --set keys.dir="$tmp/keys" >"$tmp/daemon.log" 2>&1 &
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
export CRYPTOD_SOCKET=$sock

total=0
for p in "$SRC"/man/*.3; do
	base=${p##*/}
	name=${base%.3}
	grep -q '^\.SH "\?EXAMPLES\?"\?$' "$p" || continue
	n=$(extract "$p" "$tmp/$name")
	[ "$n" -gt 0 ] && ok || bad "$base: an EXAMPLES section without a program (.EX/.EE)"
	for ((i = 1; i <= n; i++)); do
		src=$tmp/$name.$i.c
		total=$((total + 1))
		if ! build "$src"; then
			bad "$base: example $i does not compile:"
			sed 's/^/    /' "${src%.c}.log" >&2
			continue
		fi
		ok
		if timeout 60 "${src%.c}" >"${src%.c}.out" 2>&1; then
			ok
			echo "ok: $base example $i"
		else
			bad "$base: example $i exited $?:"
			sed 's/^/    /' "${src%.c}.out" >&2
		fi
	done
done
[ "$total" -ge 10 ] && ok || bad "only $total examples found in man/*.3"
kill -0 "$dpid" 2>/dev/null && ok || bad "cryptod died during the examples"

echo "man examples: $total programs; $pass checks passed, $fail failed"
[ "$fail" -eq 0 ]
