#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The man pages: groff (-man -ww -z) must have nothing to say about any of
# them, and they must stay true to the programs: every long option of
# 'cryptod --help', every command of 'cryptoctl --help' and each command's
# long options, and every function libcryptoclient exports.
#
#   test_man.sh CRYPTOD CRYPTOCTL SOURCE_DIR
#
# Exit 0 when every check passed, 1 otherwise, 77 without groff.
set -u

DAEMON=$1
CTL=$2
SRC=$3
MAN=$SRC/man

command -v groff >/dev/null || { echo "skipped: groff missing (groff-base)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptod-man.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad()
{
	fail=$((fail + 1))
	echo "FAIL: $*" >&2
}

lint() # PAGE: groff's warnings, all of them (-ww), nothing else
{
	LC_ALL=C.UTF-8 groff -man -ww -z "$1" 2>&1
}
pages=("$MAN"/*.[1-8])
[ ${#pages[@]} -ge 3 ] && ok || bad "expected at least 3 pages in man/, found ${#pages[@]}"
for p in "${pages[@]}"; do
	out=$(lint "$p")
	[ -z "$out" ] && ok || bad "groff warns about ${p##*/}: $out"
	# The header names the page: .TH NAME SECTION
	base=${p##*/}
	name=${base%.*}
	sec=${base##*.}
	grep -qi "^\.TH \"\?${name//./\\.}\"\? $sec " "$p" && ok || bad "${p##*/}: .TH does not say $name $sec"
done
# The lint can fail: an undefined macro and a bad escape are reported.
printf '.TH X 1\n.SH NAME\nx\n.XX y\n\\qz\n' >"$tmp/bad.1"
[ -n "$(lint "$tmp/bad.1")" ] && ok || bad "groff -ww found nothing wrong in a broken page"

# Page text without escapes: \- is -, font changes vanish.
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(en/-/g' "$1"; }
plain "$MAN/cryptod.8" >"$tmp/cryptod.txt"
plain "$MAN/cryptoctl.1" >"$tmp/cryptoctl.txt"
plain "$MAN/libcryptoclient.3" >"$tmp/lib.txt"

has_opts() # PAGE-TEXT LABEL: long options on stdin must be in the page
{
	local opt
	while read -r opt; do
		grep -q -- "$opt\\b" "$1" && ok || bad "$2 has $opt; its man page does not"
	done
}
# (input by redirection, not a pipe: the counters must stay in this shell)
has_opts "$tmp/cryptod.txt" "cryptod --help" < <("$DAEMON" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)

cmds=$("$CTL" --help | sed -n '/^Commands:/,/^$/p' | awk '/^  [a-z]/ { print $1 }')
[ -n "$cmds" ] && ok || bad "no commands parsed from cryptoctl --help"
for c in $cmds; do
	grep -q "^\.SS \"\?$c\b" "$tmp/cryptoctl.txt" && ok || bad "cryptoctl $c: no section in cryptoctl(1)"
	[ "$c" = help ] && continue
	has_opts "$tmp/cryptoctl.txt" "cryptoctl $c --help" \
		< <("$CTL" "$c" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u)
done
has_opts "$tmp/cryptoctl.txt" "cryptoctl --help" < <("$CTL" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)

fns=$(sed -n 's/^[[:space:]]*\(cc_[a-z_]*\);.*/\1/p' "$SRC/client-lib/libcryptoclient.map")
[ -n "$fns" ] && ok || bad "no functions parsed from libcryptoclient.map"
for f in $fns; do
	grep -q "^\.BI \"[a-z].* \*\?$f(" "$tmp/lib.txt" && ok ||
		bad "libcryptoclient exports $f; the SYNOPSIS of libcryptoclient(3) lacks it"
done

echo "man pages: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
