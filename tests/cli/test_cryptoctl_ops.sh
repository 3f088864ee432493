#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What an operator asks of figures and long work: digest and mac --verify
# take the whole value unless --truncate N says how much of it; byte
# counts in tables in 1024-based units, exact with --exact, --json and
# --prometheus; --progress on stderr, stdout unchanged.
#
#   test_cryptoctl_ops.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]   (cryptoctl_lib.sh)
set -u
. "$(dirname "$0")/cryptoctl_lib.sh"

# ---------------------------------------------------------------------------
section "digest --verify: the whole digest unless --truncate"
head -c 100000 /dev/urandom >"$tmp/pt"
full=$(sha256sum <"$tmp/pt" | cut -c1-64)
other=$(printf x | sha256sum | cut -c1-64)
ctl digest --in "$tmp/pt" --verify "$full"
check "the whole digest: exit 0" test "$rc" -eq 0 -a ! -s "$out"
expect_usage digest --in "$tmp/pt" --verify "${full:0:8}"
check "  ... its first 4 bytes alone: says the length wanted and --truncate" \
	grep -q -- '--verify: 4 bytes, but a sha256 digest has 32 (64 hex digits); for its first 4 bytes add --truncate 4' "$err"
ctl digest --in "$tmp/pt" --verify "${full:0:8}" --truncate 4
check "its first 4 bytes with --truncate 4: exit 0" test "$rc" -eq 0
ctl digest --in "$tmp/pt" --truncate 8 --verify "${full:0:16}"
check "--truncate before --verify (8 bytes): exit 0" test "$rc" -eq 0
ctl digest --in "$tmp/pt" --verify "${other:0:8}" --truncate 4
check "a wrong truncated value: exit 3" test "$rc" -eq 3
ctl digest --in "$tmp/pt" --verify "$other"
check "a wrong whole value: exit 3" test "$rc" -eq 3
expect_usage digest --in "$tmp/pt" --verify "${full:0:16}" --truncate 4
check "  ... --verify of 8 bytes with --truncate 4" \
	grep -q -- '--verify has 8 bytes but --truncate is 4' "$err"
expect_usage digest --in "$tmp/pt" --verify "${full}00"
check "  ... longer than the digest: no --truncate offered" \
	sh -c "grep -q -- 'a sha256 digest has 32' '$err' && ! grep -q -- '--truncate' '$err'"
expect_usage digest --in "$tmp/pt" --verify "${full:0:6}" --truncate 3
expect_usage digest --in "$tmp/pt" --truncate 33
check "  ... --truncate 33 on sha256: its bounds" grep -q 'digests of 4..32 bytes, got 33' "$err"
expect_usage digest --in "$tmp/pt" --truncate 0
expect_usage digest --in "$tmp/pt" --truncate 65
expect_usage digest --in "$tmp/pt" --truncate x
ctl digest -a sha512 --in "$tmp/pt" --truncate 64
check "sha512 --truncate 64 (its whole length): the whole digest" \
	test "$rc" -eq 0 -a "$(cat "$out")" = "$(sha512sum <"$tmp/pt" | cut -c1-128)"
ctl digest --in "$tmp/pt" --truncate 10
check "digest --truncate 10: the first 10 bytes" test "$(cat "$out")" = "${full:0:20}"

section "mac --verify: the whole MAC unless --truncate (or --tag-len)"
key=$(randhex 32)
mfull=$("$CTL" mac -k "$key" --in "$tmp/pt")
ctl mac -k "$key" --in "$tmp/pt" --verify "$mfull"
check "the whole MAC: exit 0" test "$rc" -eq 0
expect_usage mac -k "$key" --in "$tmp/pt" --verify "${mfull:0:8}"
check "  ... its first 4 bytes alone refused, the length said" \
	grep -q 'a hmac-sha256 MAC has 32 (64 hex digits)' "$err"
ctl mac -k "$key" --in "$tmp/pt" --verify "${mfull:0:8}" --truncate 4
check "its first 4 bytes with --truncate 4: exit 0" test "$rc" -eq 0
ctl mac -k "$key" --in "$tmp/pt" --verify "${mfull:0:24}" --tag-len 12
check "--tag-len 12 does as --truncate 12: exit 0" test "$rc" -eq 0
ctl mac -k "$key" --in "$tmp/pt" --verify "${other:0:8}" --truncate 4
check "a wrong truncated MAC: exit 3" test "$rc" -eq 3
expect_usage mac -k "$key" --in "$tmp/pt" --truncate 3
expect_usage mac -a aes-xcbc-mac -k "$K16" --in "$tmp/pt" --truncate 13
check "  ... aes-xcbc-mac's 12 bytes bound --truncate" grep -q 'MACs of 4..12 bytes, got 13' "$err"

# ---------------------------------------------------------------------------
section "byte counts: units in tables, exact elsewhere"
for _ in 1 2 3; do
	"$CTL" encrypt -k "$K16" -i "$IV12" --in "$tmp/pt" >/dev/null
done
ctl stats --json
cp "$out" "$tmp/st.json"
ctl stats
cp "$out" "$tmp/st.txt"
ctl stats --exact
cp "$out" "$tmp/st.exact"
# want ENGINE: the BYTES cell the table should show, from the JSON
check "stats: BYTES in 1024-based units, --exact the integers of --json" \
	python3 - "$tmp/st.json" "$tmp/st.txt" "$tmp/st.exact" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def human(v):
    if v < 1024:
        return str(v)
    u, x = 0, v / 1024
    while x >= 1023.95 and u < 5:
        x /= 1024
        u += 1
    return "%.1f%s" % (x, "KMGTPE"[u])
def rows(path):
    t, r = False, {}
    for line in open(path):
        f = line.split()
        if f[:3] == ["ENGINE", "OK-OPS", "BYTES"]:
            t = True
        elif t and not f:
            break
        elif t:
            r[f[0]] = f[2]
    return r
h, x = rows(sys.argv[2]), rows(sys.argv[3])
busy = 0
for e in d["engines"]:
    assert h[e["name"]] == human(e["bytes"]), (e, h)
    assert x[e["name"]] == str(e["bytes"]), (e, x)
    busy += e["bytes"] >= 300000
assert busy >= 1, d["engines"]  # one engine's count is in K at least
PY
check "stats: a count in units (nnn.nK) shown" grep -Eq '^[a-z-]+ +[0-9]+ +[0-9]+\.[0-9][KMGTPE] ' "$tmp/st.txt"
ctl stats --prometheus
check "stats --prometheus: exact integers" grep -Eq '^cryptod_engine_bytes_total\{[^}]*\} [0-9]+$' "$out"
ctl clients --exact
check "clients --exact: exit 0" test "$rc" -eq 0
ctl sessions --exact
check "sessions --exact: exit 0" test "$rc" -eq 0
expect_usage engines --exact

# ---------------------------------------------------------------------------
section "--progress: stderr only, stdout unchanged"
head -c $((5 << 20)) /dev/urandom >"$tmp/big"
"$CTL" encrypt -k "$K16" -i "$IV12" --in "$tmp/big" >"$tmp/ct.plain" 2>"$err"
check "encrypt without --progress: nothing on stderr" test ! -s "$err"
"$CTL" encrypt -k "$K16" -i "$IV12" --in "$tmp/big" --progress=always \
	>"$tmp/ct.prog" 2>"$tmp/prog.err"
check "encrypt --progress=always: the same stdout" cmp -s "$tmp/ct.plain" "$tmp/ct.prog"
check "  ... a last line with the exact count" \
	grep -Eqx 'cryptoctl: encrypt: done, 5\.0M \(5242880 bytes\) in [0-9]+\.[0-9]s, [0-9.]+[KMGTPE]?/s' "$tmp/prog.err"
check "  ... every line of the known forms (a file: share and ETA)" \
	awk '!/^cryptoctl: encrypt: ([0-9.]+[KMGTPE]? of 5\.0M \([0-9]+%\), [0-9.]+[KMGTPE]?\/s, ETA [0-9:]+|done, .*)$/ { exit 1 }' "$tmp/prog.err"
"$CTL" encrypt -k "$K16" -i "$IV12" --in "$tmp/big" --progress >/dev/null 2>"$err"
check "--progress (auto), stderr not a terminal: nothing" test ! -s "$err"
# A pipe with a pause: updates while it runs, no size so no ETA.
(
	head -c $((2 << 20)) "$tmp/big"
	sleep 1.2
	tail -c +$(((2 << 20) + 1)) "$tmp/big"
) | "$CTL" encrypt -k "$K16" -i "$IV12" --progress=always >"$tmp/ct.pipe" 2>"$tmp/prog.err"
check "from a pipe: the same stdout" cmp -s "$tmp/ct.plain" "$tmp/ct.pipe"
check "  ... an update while it ran: bytes and rate" \
	grep -Eqx 'cryptoctl: encrypt: [0-9.]+[KMGTPE]?, [0-9.]+[KMGTPE]?/s' "$tmp/prog.err"
check "  ... and the last line" grep -q '^cryptoctl: encrypt: done, 5\.0M (5242880 bytes)' "$tmp/prog.err"
"$CTL" decrypt -k "$K16" -i "$IV12" --in "$tmp/ct.plain" --progress=always \
	>"$tmp/rt" 2>"$tmp/prog.err"
check "decrypt --progress=always: round trip, the data counted without the tag" \
	sh -c "cmp -s '$tmp/big' '$tmp/rt' && grep -q '(5242880 bytes)' '$tmp/prog.err'"
ctl digest --in "$tmp/big" --progress=always
check "digest --progress=always: the digest alone on stdout" \
	test "$(cat "$out")" = "$(sha256sum <"$tmp/big" | cut -c1-64)"
check "  ... the last line on stderr" grep -q '^cryptoctl: digest: done, 5\.0M' "$err"
ctl mac -k "$key" --in "$tmp/big" --progress=never
check "mac --progress=never: nothing on stderr" test "$rc" -eq 0 -a ! -s "$err"
expect_usage encrypt -k "$K16" -i "$IV12" --progress=sometimes
expect_usage digest --progress=bogus

finish test_cryptoctl_ops
