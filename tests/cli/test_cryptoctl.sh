#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl end to end, the basics: help and version, ping, engines (the
# capability table, --all, --json) and bad arguments (exit 2, one line).
#
#   test_cryptoctl.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]   (cryptoctl_lib.sh)
set -u
. "$(dirname "$0")/cryptoctl_lib.sh"

# ---------------------------------------------------------------------------
section "help and version"
for args in "--help" "-h" "help"; do
	ctl $args
	check "cryptoctl $args" \
		test "$rc" -eq 0 -a ! -s "$err" -a "$(head -c 16 "$out")" = "Usage: cryptoctl"
done
grep -q '^  stats ' "$out" && grep -q '^  encrypt ' "$out" &&
	grep -q '^  engines ' "$out" && grep -q '^Exit status' "$out"
check "main help lists commands and exit codes" test $? -eq 0
for cmd in stats engines encrypt decrypt ping version; do
	ctl "$cmd" --help
	check "$cmd --help" test "$rc" -eq 0 -a ! -s "$err" \
		-a "$(head -n 1 "$out" | cut -d' ' -f1-3)" = "Usage: cryptoctl $cmd"
	cp "$out" "$tmp/help1"
	ctl help "$cmd"
	check "help $cmd = $cmd --help" cmp -s "$out" "$tmp/help1"
done
ctl encrypt --help
for opt in --auth-key --auth-key-file --engine --sessionless aes-gmac aes-xts \
	aes-cbc-hmac-sha256 'authenc(hmac(sha1),cbc(aes))'; do
	check "encrypt --help mentions $opt" grep -qF -- "$opt" "$out"
done
for args in "--version" "-V" "version"; do
	ctl $args
	check "cryptoctl $args" test "$rc" -eq 0 -a ! -s "$err"
	check "cryptoctl $args output" grep -Eq '^cryptoctl [0-9]+\.[0-9]+' "$out"
done

# ---------------------------------------------------------------------------
section "ping"
ctl ping
check "ping exits 0" test "$rc" -eq 0
check "ping prints the daemon version" grep -q '^cryptod .* at '"$sock"': ' "$out"
ctl version
check "version: the daemon's too" grep -q "^cryptod .* at $sock\$" "$out"
ctl version --socket "$tmp/nowhere.sock"
check "version without a daemon: exit 0, says so" \
	test "$rc" -eq 0 -a ! -s "$err" -a "$(lines "$out")" -eq 2
unset CRYPTOD_SOCKET
ctl --socket "$sock" ping
check "--socket before the command" test "$rc" -eq 0
ctl ping --socket "$sock"
check "--socket after the command" test "$rc" -eq 0
export CRYPTOD_SOCKET=$sock

# ---------------------------------------------------------------------------
section "engines"
ALGS="aes-gcm aes-gmac aes-cbc aes-ctr aes-ecb aes-xts aes-cbc-hmac-sha1
aes-cbc-hmac-sha256 aes-cbc-null aes-lrw aes-gcm-rfc4106 null aes-ccm
chacha20-poly1305 chacha20"
ctl engines
check "engines: exit 0" test "$rc" -eq 0 -a ! -s "$err"
check "engines: header" grep -Eq \
	'^ALGORITHM +ENGINE +DEFAULT +AVAILABLE +KEY +AUTH-KEY +IV +TAG +LENGTH$' \
	"$out"
for alg in $ALGS; do
	check "engines lists $alg" grep -q "^$alg " "$out"
done
check "engines: aes-lrw unavailable" \
	awk '$1 == "aes-lrw" && $4 == "no" { f = 1 } END { exit !f }' "$out"
check "engines: why aes-lrw is unavailable" \
	grep -Eq '^aes-lrw on [^ ]+: unavailable: .{8}' "$out"
check "engines: aes-gcm row in DPDK ranges (key 16-32/8, IV 1-128, tag 4,8,12-16)" \
	awk '$1 == "aes-gcm" && $4 == "yes" && $5 == "16-32/8" && $7 == "1-128" &&
		$8 == "4,8,12-16" { f = 1 } END { exit !f }' "$out"
check "engines: aes-cbc-hmac-sha1 takes an HMAC key, tag 12" \
	awk '$1 == "aes-cbc-hmac-sha1" && $4 == "yes" && $6 != "-" &&
		$8 == "12" { f = 1 } END { exit !f }' "$out"
rows=$(grep -c . "$out")
ctl engines --all
check "engines --all: exit 0, at least as many rows ($rows)" \
	test "$rc" -eq 0 -a "$(grep -c . "$out")" -ge "$rows"
ctl engines --json
cp "$out" "$tmp/engines.json"
check "engines --json: exit 0" test "$rc" -eq 0 -a ! -s "$err"
# Every algorithm of cryptoclient.h is there; each but LRW has one default
# engine, available; LRW is nowhere available, and says why.
python3 - "$tmp/engines.json" "$(dirname "$0")/../../include/cryptod/algs.h" \
	>"$tmp/engines.txt" <<'EOF'
import json, re, sys
rows = json.load(open(sys.argv[1]))["algorithms"]
# The rows of algs.h: X(ID, number, "name", kname, tag, KIND, ...)
algs = {int(n): (name, kind.lower()) for n, name, kind in re.findall(
    r'X\(\w+,\s*(\d+),\s*"([^"]+)",\s*(?:NULL|"[^"]*"),\s*\d+,\s*(\w+),',
    open(sys.argv[2]).read().replace("\\\n", " "))}
assert len(algs) >= 37, algs
# Every row of algs.h has an engine (LRW's is unavailable here).
assert {r["id"] for r in rows} == set(algs), set(algs) - {r["id"] for r in rows}
for r in rows:
    assert (r["alg"], r["kind"]) == algs[r["id"]], (r, algs[r["id"]])
for r in rows:
    for k in ("key_sizes", "auth_key_sizes", "iv_sizes", "tag_sizes"):
        assert all(set(x) == {"min", "max", "increment"} for x in r[k]), r
        assert all(x["min"] <= x["max"] for x in r[k]), r
    assert r["available"] or r["reason"], r
for alg in {r["alg"] for r in rows}:
    mine = [r for r in rows if r["alg"] == alg]
    if alg == "aes-lrw":
        assert not any(r["available"] for r in mine), mine
        continue
    d = [r for r in mine if r["default"]]
    assert len(d) == 1 and d[0]["available"], mine
for r in rows:
    if r["available"]:
        print(r["alg"], r["engine"])
EOF
check "engines --json: every algorithm, one default each, LRW unavailable" \
	test $? -eq 0
check "engines --json: aes-gcm runs on aesni" grep -q '^aes-gcm aesni$' "$tmp/engines.txt"

# ---------------------------------------------------------------------------
section "bad arguments: exit 2, one line on stderr"
expect_usage
expect_usage frobnicate
expect_usage --bogus
expect_usage --socket
expect_usage help frobnicate
expect_usage stats --bogus
expect_usage stats extra
expect_usage ping extra
expect_usage version --bogus
expect_usage encrypt
expect_usage encrypt -i "$IV12"
expect_usage encrypt -k
expect_usage encrypt -k zz -i "$IV12"
expect_usage encrypt -k 0 -i "$IV12"
expect_usage encrypt -k 000102030405060708090a0b0c0d0e -i "$IV12"
expect_usage encrypt -a aes-128-gcm -k "$K16$K16" -i "$IV12"
expect_usage encrypt -a aes-256-gcm -k "$K16" -i "$IV12"
expect_usage encrypt -a aes-999-gcm -k "$K16" -i "$IV12"
expect_usage encrypt -k "$K16"
expect_usage encrypt -k "$K16" -i "$(randhex 129)"
expect_usage encrypt -k "$K16" -i "$IV12" --aad xyz
expect_usage encrypt -k "$K16" -i "$IV12" --tag-len 5
expect_usage encrypt -k "$K16" -i "$IV12" --tag-len 17
expect_usage encrypt -k "$K16" -i "$IV12" --tag-len abc
expect_usage encrypt -k "$K16" -i "$IV12" -t "$K16"
expect_usage encrypt -k "$K16" -i "$IV12" --tag-out foo
expect_usage encrypt -k "$K16" -i "$IV12" --key-file "$tmp/no-such-file"
expect_usage encrypt -k "$K16" -i "$IV12" extra
expect_usage encrypt -a null -k "$K16"
expect_usage encrypt -a null --tag-len 16
expect_usage decrypt -k "$K16" -i "$IV12" --tag-out hex
expect_usage decrypt -k "$K16" -i "$IV12" -t "$K16" --tag-len 12
expect_usage decrypt -k "$K16" -i "$IV12" -t 00010203040506
# Every other algorithm: its key, IV, AAD, tag and HMAC key rules.
expect_usage encrypt -a aes-frob -k "$K16" -i "$IV16"
expect_usage encrypt -a aes-192-xts -k "$K32$K16" -i "$IV16"
expect_usage encrypt -a aes-128-null -k "$K16" -i "$IV16"
expect_usage encrypt -a aes-cbc -k "$K16"
expect_usage encrypt -a aes-cbc -k "$K16" -i "$IV12"
expect_usage encrypt -a aes-ctr -k "$K16" -i "$IV12"
expect_usage encrypt -a aes-gmac -k "$K16" -i "$(randhex 129)"
expect_usage encrypt -a aes-ecb -k "$K16" -i "$IV16"
expect_usage encrypt -a aes-128-cbc -k "$K32" -i "$IV16"
expect_usage encrypt -a aes-256-ctr -k "$K16" -i "$IV16"
expect_usage encrypt -a aes-cbc -k "$K16" -i "$IV16" --aad 00
expect_usage encrypt -a aes-ctr -k "$K16" -i "$IV16" --tag-len 16
expect_usage encrypt -a aes-ecb -k "$K16" --tag-out hex
expect_usage decrypt -a aes-cbc -k "$K16" -i "$IV16" -t "$K16"
expect_usage encrypt -a aes-gmac -k "$K16" -i "$IV12" --aad 00
expect_usage encrypt -a aes-gmac -k "$K16" -i "$IV12" --tag-len 10
expect_usage encrypt -a aes-xts -k "$K16" -i "$IV16"
expect_usage encrypt -a aes-xts -k "$K16$K16" -i "$IV16"
expect_usage encrypt -a aes-128-xts -k "$K32$K32" -i "$IV16"
expect_usage encrypt -a aes-256-xts -k "$K32" -i "$IV16"
expect_usage encrypt -a aes-xts -k "$K32" -i "$IV12"
expect_usage encrypt -a aes-cbc-hmac-sha1 -k "$K16" -i "$IV16"
expect_usage encrypt -a aes-cbc-hmac-sha1 -k "$K16" -i "$IV16" --auth-key ''
expect_usage encrypt -a aes-cbc-hmac-sha1 -k "$K16" -i "$IV16" \
	--auth-key "$(randhex 65)"
expect_usage encrypt -a aes-cbc-hmac-sha1 -k "$K16" -i "$IV16" \
	--auth-key zz
expect_usage encrypt -a aes-cbc-hmac-sha1 -k "$K16" -i "$IV16" \
	--auth-key "$AK" --tag-len 16
expect_usage encrypt -a aes-cbc-hmac-sha256 -k "$K16" -i "$IV16" \
	--auth-key "$AK" --tag-len 12
expect_usage decrypt -a aes-cbc-hmac-sha256 -k "$K16" -i "$IV16" \
	--auth-key "$AK" -t "$(randhex 12)"
expect_usage encrypt -a 'authenc(hmac(sha1),cbc(aes))' -k "$K16" \
	-i "$IV12" --auth-key "$AK"
expect_usage encrypt -a aes-cbc-hmac-sha1 -k "$K16" -i "$IV16" \
	--auth-key-file "$tmp/no-such-file"
expect_usage encrypt -a aes-cbc -k "$K16" -i "$IV16" --auth-key "$AK"
expect_usage encrypt -a aes-cbc-null -k "$K16" -i "$IV16" --aad 00
expect_usage encrypt -a aes-cbc-null -k "$K16" -i "$IV16" --tag-len 16
expect_usage encrypt -a null --aad 00
expect_usage encrypt -a null --auth-key "$AK"
expect_usage encrypt --sessionless --engine aesni -k "$K16" -i "$IV12"
expect_usage encrypt -a aes-ccm -k "$K16" -i 000102030405
expect_usage encrypt -a aes-ccm -k "$K16" -i 000102030405060708090a0b0c0d
expect_usage encrypt -a aes-ccm -k "$K16" -i "$IV12" --tag-len 5
expect_usage encrypt -a chacha20-poly1305 -k "$K32" -i "$IV12" --tag-len 12
expect_usage encrypt -a chacha20 -k "$K32" -i "$IV12"
expect_usage encrypt -a chacha20 -k "$K32" -i "$IV16" --aad 00
expect_usage engines extra
expect_usage engines --bogus

finish test_cryptoctl
