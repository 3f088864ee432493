#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The man pages: groff (-man -ww -z) must have nothing to say about any of
# them, and they must stay true to the programs: every long option of
# 'cryptod --help', every command of 'cryptoctl --help' and each command's
# long options, and every function libcryptoclient exports, each with its
# own page (or named in a group page's NAME) and the usual sections.
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

# A page per function or group, as liburing has: man/cc_*.3, whose NAME
# line lists the functions it documents (the others get .so links to it,
# man/CMakeLists.txt). Every exported function is named by exactly one
# page, which has its prototype in its SYNOPSIS; a page names no function
# the library does not export; each has the sections a library page has,
# and the overview's SEE ALSO lists it.
names() # PAGE: the cc_ names of its NAME section, before the " \- "
{
	awk '/^\.SH / { in_name = ($2 == "NAME"); next }
		in_name { print; if (/\\-/) exit }' "$1" | sed 's/\\-.*//' |
		grep -o 'cc_[a-z0-9_]*'
}
: >"$tmp/named"
cpages=("$MAN"/cc_*.3)
[ ${#cpages[@]} -ge 12 ] && ok || bad "expected a page per function or group in man/cc_*.3, found ${#cpages[@]}"
for p in "${cpages[@]}"; do
	base=${p##*/}
	page=${base%.3}
	plain "$p" >"$tmp/page.txt"
	names "$p" >"$tmp/names"
	grep -qx "$page" "$tmp/names" && ok || bad "$base: its NAME does not list $page"
	while read -r f; do
		echo "$f $base" >>"$tmp/named"
		grep -qx "$f" <<<"$fns" && ok || bad "$base names $f, which libcryptoclient does not export"
		grep -q "^\.BI \"[a-z].* \*\?$f(" "$tmp/page.txt" && ok ||
			bad "$base names $f; its SYNOPSIS lacks the prototype"
	done <"$tmp/names"
	for sec in NAME SYNOPSIS DESCRIPTION "RETURN VALUE" ERRORS "SEE ALSO"; do
		grep -q "^\.SH \"\?$sec\"\?$" "$p" && ok || bad "$base: no $sec section"
	done
	grep -q "^\.BR $page (3)" "$MAN/libcryptoclient.3" && ok ||
		bad "libcryptoclient(3) does not refer to $base"
done
for f in $fns; do
	n=$(grep -c "^$f " "$tmp/named")
	[ "$n" -eq 1 ] && ok || bad "$f is named by $n pages' NAME (want exactly 1): $(grep "^$f " "$tmp/named" | cut -d' ' -f2 | tr '\n' ' ')"
done
# Every reference to a library page goes somewhere: a page or a name
# a page lists.
for p in "$MAN"/*.[1-8]; do
	for ref in $(grep -o '^\.BR cc_[a-z0-9_]* (3)' "$p" | awk '{ print $2 }' | sort -u); do
		{ [ -f "$MAN/$ref.3" ] || grep -q "^$ref " "$tmp/named"; } && ok ||
			bad "${p##*/} refers to $ref(3), which no page documents"
	done
done
# All algorithms listed: every row of <cryptod/algs.h> has an entry,
# name and enum, in cc_alg_name(3)'s ALGORITHMS.
plain "$MAN/cc_alg_name.3" | sed -n '/^\.SH ALGORITHMS/,/^\.SH /p' >"$tmp/algs.txt"
rows=$(sed -n 's/.*X(\([A-Z0-9_]*\), *[0-9]*, *"\([a-z0-9-]*\)".*/\1 \2/p' "$SRC/include/cryptod/algs.h")
[ "$(wc -l <<<"$rows")" -ge 30 ] && ok || bad "algorithms parsed from algs.h: $(wc -l <<<"$rows")"
while read -r id name; do
	grep -qxF ".BR $name \", \" CC_ALG_$id" "$tmp/algs.txt" && ok ||
		bad "cc_alg_name(3) ALGORITHMS lacks $name (CC_ALG_$id)"
done <<<"$rows"
# Every public struct member by member: each struct cc_* of the header is
# spelled out in the SYNOPSIS of one cc_*.3 page (.B struct NAME { ...
# .B };) with every member, and each member is named again below the
# SYNOPSIS, where the page says what it is.
awk -f "$SRC/tests/man/structs.awk" "$SRC/client-lib/include/cryptoclient.h" >"$tmp/members"
[ "$(cut -d' ' -f1 "$tmp/members" | sort -u | wc -l)" -ge 20 ] && ok ||
	bad "structs parsed from cryptoclient.h: $(cut -d' ' -f1 "$tmp/members" | sort -u | tr '\n' ' ')"
for st in $(cut -d' ' -f1 "$tmp/members" | sort -u); do
	where=$(grep -l "^\.B struct $st {\$" "$MAN"/cc_*.3)
	if [ "$(wc -w <<<"$where")" -ne 1 ]; then
		bad "struct $st is spelled out in $(wc -w <<<"$where") pages' SYNOPSIS (want 1): $where"
		continue
	fi
	ok
	plain "$where" >"$tmp/page.txt"
	sed -n "/^\.B struct $st {\$/,/^\.B };/p" "$tmp/page.txt" >"$tmp/syn"
	sed -n '/^\.SH DESCRIPTION/,$p' "$tmp/page.txt" >"$tmp/desc"
	for m in $(awk -v s="$st" '$1 == s { print $2 }' "$tmp/members"); do
		grep -qw -- "$m" "$tmp/syn" && ok || bad "${where##*/}: struct $st in the SYNOPSIS lacks $m"
		grep -qw -- "$m" "$tmp/desc" && ok || bad "${where##*/}: struct $st member $m is not described"
	done
done
# (the parser can fail: a struct it must find)
printf 'struct cc_x {\n\tint a, b; /* c; */\n\tchar d[4];\n};\n' >"$tmp/x.h"
[ "$(awk -f "$SRC/tests/man/structs.awk" "$tmp/x.h" | tr '\n' ' ')" = "cc_x a cc_x b cc_x d " ] && ok ||
	bad "structs.awk: got '$(awk -f "$SRC/tests/man/structs.awk" "$tmp/x.h" | tr '\n' ' ')'"
# The checks can fail: a page name that is not exported is caught.
printf '.TH CC_NOPE 3\n.SH NAME\ncc_nope, cc_connect \\- x\n.SH SYNOPSIS\n' >"$tmp/cc_nope.3"
[ "$(names "$tmp/cc_nope.3" | tr '\n' ' ')" = "cc_nope cc_connect " ] && ok ||
	bad "NAME parsing: got '$(names "$tmp/cc_nope.3" | tr '\n' ' ')'"
grep -qx cc_nope <<<"$fns" && bad "cc_nope is exported?" || ok

echo "man pages: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
