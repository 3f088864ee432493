#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# End-to-end test of cryptoctl against a real cryptod on a temporary socket.
#
#   test_cryptoctl.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]
#
# GCM_REF is an OpenSSL AES-GCM with cryptoctl's conventions (gcm_ref.c);
# HOLD_QUEUE a client that keeps a queue open (hold_queue.c). Python's
# 'cryptography' package, when importable, is a second independent check
# for GCM and the reference for every other algorithm, on every engine
# 'cryptoctl engines --json' lists, with and without a session.
# Exit 0 when every check passed, 1 otherwise.
set -u

DAEMON=$1
CTL=$2
REF=${3:-}
HOLD=${4:-}
VEC=/usr/lib/python3/dist-packages/cryptography_vectors/ciphers/AES/GCM
AESVEC=${VEC%/GCM}
# How many vectors of each [Keylen/IVlen/PTlen/AADlen/Taglen] section to run.
NIST_PER_SECTION=${NIST_PER_SECTION:-1}
# The same for CBC, ECB, CTR and XTS ([ENCRYPT]/[DECRYPT], and XTS's
# data unit lengths).
CAVP_PER_SECTION=${CAVP_PER_SECTION:-2}
# Random cases per algorithm in the cross-check with python.
XCHECK_PER_ALG=${XCHECK_PER_ALG:-4}

# python3 checks the JSON output; Debian's vectors are a python package too.
if ! command -v python3 >/dev/null; then
	echo "skipped: python3 is needed"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cryptoctl-test.XXXXXX") || exit 1
sock=$tmp/cryptod.sock
dpid=
hpid=
pass=0
fail=0

cleanup()
{
	[ -n "$hpid" ] && kill "$hpid" 2>/dev/null
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

ok() { pass=$((pass + 1)); }
bad()
{
	fail=$((fail + 1))
	echo "FAIL: $*" >&2
}
# check DESCRIPTION COMMAND...: COMMAND's status decides.
check()
{
	local desc=$1
	shift
	if "$@"; then
		ok
		echo "ok: $desc"
	else
		bad "$desc"
	fi
}
section() { echo "== $*"; }

hex2bin() { printf '%b' "$(sed 's/../\\x&/g' <<<"$1")"; }
bin2hex() { od -An -tx1 -v | tr -d ' \n'; }
randhex() { head -c "$1" /dev/urandom | bin2hex; }
lines() { local n; n=$(wc -l <"$1"); echo "$n"; }

# ctl ARGS... : run cryptoctl; stdout in $out, stderr in $err, status in $rc.
out=$tmp/out
err=$tmp/err
ctl()
{
	"$CTL" "$@" >"$out" 2>"$err"
	rc=$?
}

# A bad-argument failure: status 2, nothing on stdout, one line on stderr
# that starts with "cryptoctl: ". expect_usage_from reads stdin from FILE.
expect_usage_from()
{
	local in=$1
	shift
	ctl "$@" <"$in"
	if [ "$rc" -eq 2 ] && [ ! -s "$out" ] && [ "$(lines "$err")" -eq 1 ] &&
		grep -q '^cryptoctl: ' "$err"; then
		ok
		echo "ok: exit 2: cryptoctl $*: $(cat "$err")"
	else
		bad "usage error expected for: $* (rc=$rc, stderr: $(cat "$err"))"
	fi
}
expect_usage() { expect_usage_from /dev/null "$@"; }

# ---------------------------------------------------------------------------
section "start cryptod on $sock"
"$DAEMON" --socket "$sock" --workers 2 >"$tmp/daemon.log" 2>&1 &
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
aes-cbc-hmac-sha256 aes-cbc-null aes-lrw aes-gcm-rfc4106 null"
ctl engines
check "engines: exit 0" test "$rc" -eq 0 -a ! -s "$err"
check "engines: header" grep -Eq \
	'^ALGORITHM +ENGINE +DEFAULT +AVAILABLE +KEY +AUTH-KEY +IV +TAG +AAD +LENGTH$' \
	"$out"
for alg in $ALGS; do
	check "engines lists $alg" grep -q "^$alg " "$out"
done
check "engines: aes-lrw unavailable" \
	awk '$1 == "aes-lrw" && $4 == "no" { f = 1 } END { exit !f }' "$out"
check "engines: why aes-lrw is unavailable" \
	grep -Eq '^aes-lrw on [^ ]+: unavailable: .{8}' "$out"
check "engines: aes-gcm row in DPDK ranges (key 16-32/8, IV 12, tag 4,8,12-16)" \
	awk '$1 == "aes-gcm" && $4 == "yes" && $5 == "16-32/8" && $7 == "12" &&
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
python3 - "$tmp/engines.json" >"$tmp/engines.txt" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))["algorithms"]
assert {r["id"] for r in rows} == set(range(1, 13)), rows
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
# engines_of ALG: the engines that run ALG, for the cross-checks below.
engines_of()
{
	awk -v a="$1" '$1 == a { printf "%s ", $2 }' "$tmp/engines.txt"
}
check "engines --json: aes-gcm runs on aesni" grep -q '^aes-gcm aesni$' "$tmp/engines.txt"

# ---------------------------------------------------------------------------
section "bad arguments: exit 2, one line on stderr"
K16=000102030405060708090a0b0c0d0e0f
IV12=000102030405060708090a0b
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
expect_usage encrypt -k "$K16" -i 0001020304050607
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
IV16=$K16
K32=$K16$(randhex 16)
AK=$(randhex 20)
expect_usage encrypt -a aes-frob -k "$K16" -i "$IV16"
expect_usage encrypt -a aes-192-xts -k "$K32$K16" -i "$IV16"
expect_usage encrypt -a aes-128-null -k "$K16" -i "$IV16"
expect_usage encrypt -a aes-cbc -k "$K16"
expect_usage encrypt -a aes-cbc -k "$K16" -i "$IV12"
expect_usage encrypt -a aes-ctr -k "$K16" -i "$IV12"
expect_usage encrypt -a aes-gmac -k "$K16" -i "$IV16"
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
expect_usage encrypt -k "$K16" -i 00 --engine aesni
expect_usage encrypt -a aes-gmac -k "$K16" -i 00 --engine openssl
expect_usage engines extra
expect_usage engines --bogus

# ---------------------------------------------------------------------------
section "published vectors"
# McGrew & Viega, "The Galois/Counter Mode of Operation", test case 4.
tc4_key=feffe9928665731c6d6a8f9467308308
tc4_iv=cafebabefacedbaddecaf888
tc4_aad=feedfacedeadbeeffeedfacedeadbeefabaddad2
tc4_pt=d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39
tc4_ct=42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091
tc4_tag=5bc94fbc3221a5db94fae95ae7121a47
got=$(hex2bin "$tc4_pt" | "$CTL" encrypt -a aes-128-gcm -k "$tc4_key" \
	-i "$tc4_iv" --aad "$tc4_aad" | bin2hex)
check "GCM test case 4 encrypt: got $got" test "$got" = "$tc4_ct$tc4_tag"
got=$(hex2bin "$tc4_ct$tc4_tag" | "$CTL" decrypt -k "$tc4_key" -i "$tc4_iv" \
	--aad "$tc4_aad" | bin2hex)
check "GCM test case 4 decrypt, appended tag" test "$got" = "$tc4_pt"
got=$(hex2bin "$tc4_ct" | "$CTL" decrypt -k "$tc4_key" -i "$tc4_iv" \
	--aad "$tc4_aad" -t "$tc4_tag" | bin2hex)
check "GCM test case 4 decrypt, --tag" test "$got" = "$tc4_pt"
hex2bin "$tc4_pt" | "$CTL" encrypt -k "$tc4_key" -i "$tc4_iv" \
	--aad "$tc4_aad" --tag-out hex >"$out" 2>"$err"
check "--tag-out hex: ciphertext only on stdout" \
	test "$(bin2hex <"$out")" = "$tc4_ct"
check "--tag-out hex: the tag as one hex line on stderr" \
	test "$(cat "$err")" = "$tc4_tag" -a "$(lines "$err")" -eq 1

# NIST CAVP (gcmEncryptExtIV*.rsp, gcmDecrypt*.rsp), 96-bit IVs.
# nist_vectors FILE: "key iv pt aad ct tag" per vector, '-' for empty,
# pt 'FAIL' for a vector whose tag must not verify.
nist_vectors()
{
	awk -v per="$NIST_PER_SECTION" '
	function f(v) { return v == "" ? "-" : v }
	{ sub(/\r$/, "") }
	/^\[IVlen = / { ivlen = $3 + 0 }
	/^Count = / { count = $3 + 0; pt = ""; failed = 0 }
	/^Key = / { key = $3 }
	/^IV = / { iv = $3 }
	/^PT = / { pt = $3 }
	/^AAD = / { aad = $3 }
	/^CT = / { ct = $3 }
	/^Tag = / { tag = $3 }
	/^FAIL/ { failed = 1 }
	/^$/ && key != "" {
		if (ivlen == 96 && count < per)
			print key, iv, (failed ? "FAIL" : f(pt)), f(aad), f(ct), tag
		key = ""
	}
	END { if (key != "" && ivlen == 96 && count < per)
		print key, iv, (failed ? "FAIL" : f(pt)), f(aad), f(ct), tag }
	' "$1"
}

if [ -d "$VEC" ]; then
	for bits in 128 192 256; do
		n=0 nbad=0
		while read -r key iv pt aad ct tag; do
			[ "$pt" = - ] && pt=
			[ "$aad" = - ] && aad=
			[ "$ct" = - ] && ct=
			n=$((n + 1))
			got=$(hex2bin "$pt" | "$CTL" encrypt -a "aes-$bits-gcm" \
				-k "$key" -i "$iv" --aad "$aad" \
				--tag-len $((${#tag} / 2)) | bin2hex)
			if [ "$got" != "$ct$tag" ]; then
				nbad=$((nbad + 1))
				[ $nbad -le 3 ] && echo "  encrypt mismatch: key=$key iv=$iv aad=$aad pt=$pt: got $got want $ct$tag" >&2
			fi
		done < <(nist_vectors "$VEC/gcmEncryptExtIV$bits.rsp")
		check "NIST gcmEncryptExtIV$bits: $((n - nbad))/$n vectors" \
			test "$n" -gt 0 -a "$nbad" -eq 0

		n=0 nbad=0 nfail=0
		while read -r key iv pt aad ct tag; do
			[ "$pt" = - ] && pt=
			[ "$aad" = - ] && aad=
			[ "$ct" = - ] && ct=
			n=$((n + 1))
			hex2bin "$ct" | "$CTL" decrypt -k "$key" -i "$iv" \
				--aad "$aad" -t "$tag" >"$out" 2>"$err"
			rc=$?
			if [ "$pt" = FAIL ]; then
				nfail=$((nfail + 1))
				[ "$rc" -eq 3 ] && [ ! -s "$out" ] && continue
			else
				[ "$rc" -eq 0 ] && [ "$(bin2hex <"$out")" = "$pt" ] && continue
			fi
			nbad=$((nbad + 1))
			[ $nbad -le 3 ] && echo "  decrypt mismatch: key=$key iv=$iv ct=$ct tag=$tag want $pt: rc=$rc $(cat "$err")" >&2
		done < <(nist_vectors "$VEC/gcmDecrypt$bits.rsp")
		check "NIST gcmDecrypt$bits: $((n - nbad))/$n vectors ($nfail must fail)" \
			test "$n" -gt 0 -a "$nfail" -gt 0 -a "$nbad" -eq 0
	done
else
	echo "  skipped: $VEC missing (Debian: python3-cryptography-vectors)"
fi

# ---------------------------------------------------------------------------
section "published vectors: CBC, ECB, CTR, XTS, GMAC, HMAC"
# kat DESC ALG KEY IV PT CT [OPTIONS...]: encrypt PT to CT and CT back to
# PT ('-': no IV; CT includes the tag, if any).
kat()
{
	local desc=$1 alg=$2 key=$3 iv=$4 pt=$5 ct=$6 got
	local ivarg=()
	shift 6
	[ "$iv" != - ] && ivarg=(-i "$iv")
	got=$(hex2bin "$pt" | "$CTL" encrypt -a "$alg" -k "$key" "${ivarg[@]}" \
		"$@" | bin2hex)
	check "$desc: encrypt" test "$got" = "$ct"
	[ "$got" = "$ct" ] || echo "  got $got" >&2
	got=$(hex2bin "$ct" | "$CTL" decrypt -a "$alg" -k "$key" "${ivarg[@]}" \
		"$@" | bin2hex)
	check "$desc: decrypt" test "$got" = "$pt"
}

# RFC 3602 section 4, cases 1-4.
kat "RFC 3602 case 1" aes-cbc 06a9214036b8a15b512e03d534120006 \
	3dafba429d9eb430b422da802c9fac41 \
	$(printf 'Single block msg' | bin2hex) e353779c1079aeb82708942dbe77181a
kat "RFC 3602 case 2" aes-128-cbc c286696d887c9aa0611bbb3e2025a45a \
	562e17996d093d28ddb3ba695a2e6f58 \
	000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f \
	d296cd94c2cccf8a3a863028b5e1dc0a7586602d253cfff91b8266bea6d61ab1
rfc3602_3_key=6c3ea0477630ce21a2ce334aa746c2cd
rfc3602_3_iv=c782dc4c098c66cbd9cd27d825682c81
rfc3602_3_pt=$(printf 'This is a 48-byte message (exactly 3 AES blocks)' | bin2hex)
rfc3602_3_ct=d0a02b3836451753d493665d33f0e8862dea54cdb293abc7506939276772f8d5021c19216bad525c8579695d83ba2684
kat "RFC 3602 case 3" 'cbc(aes)' $rfc3602_3_key $rfc3602_3_iv \
	$rfc3602_3_pt $rfc3602_3_ct
kat "RFC 3602 case 4" aes-cbc 56e47a38c5598974bc46903dba290349 \
	8ce82eefbea0da3c44699ed7db51b7d9 \
	$(for i in $(seq 160 223); do printf '%02x' "$i"; done) \
	c30e32ffedc0774e6aff6af0869f71aa0f3af07a9a31a9c684db207eb0ef8e4e35907aa632c3ffdf868bb7b29d3d46ad83ce9f9a102ee99d49a53e87f4c3da55
# CBC with a null digest is CBC.
kat "RFC 3602 case 3 through aes-cbc-null" aes-cbc-null $rfc3602_3_key \
	$rfc3602_3_iv $rfc3602_3_pt $rfc3602_3_ct
kat "RFC 3602 case 3 through authenc(digest_null,cbc(aes))" \
	'authenc(digest_null,cbc(aes))' $rfc3602_3_key $rfc3602_3_iv \
	$rfc3602_3_pt $rfc3602_3_ct

# cavp_vectors FILE: "key iv pt ct" ('-': no IV) for the first
# $CAVP_PER_SECTION vectors of each section (and XTS data unit length;
# units of a fractional byte count are skipped).
cavp_vectors()
{
	awk -v per="$CAVP_PER_SECTION" '
	function flush() {
		if (key != "" && dul % 8 == 0 && seen[sec "/" dul]++ < per)
			print key, (iv == "" ? "-" : iv), pt, ct
		key = iv = pt = ct = ""
	}
	{ sub(/\r$/, "") }
	/^\[/ { flush(); sec = $0 }
	/^(COUNT|Count) = / { flush(); dul = 0 }
	/^DataUnitLen = / { dul = $3 + 0 }
	/^(KEY|Key) = / { key = tolower($3) }
	/^(IV|i) = / { iv = tolower($3) }
	/^(PLAINTEXT|PT) = / { pt = tolower($3) }
	/^(CIPHERTEXT|CT) = / { ct = tolower($3) }
	END { flush() }
	' "$1"
}

# run_cavp ALG FILE...: each vector both ways.
run_cavp()
{
	local alg=$1 f key iv pt ct got n=0 nbad=0 ivarg
	shift
	for f in "$@"; do
		while read -r key iv pt ct; do
			ivarg=()
			[ "$iv" != - ] && ivarg=(-i "$iv")
			n=$((n + 1))
			got=$(hex2bin "$pt" | "$CTL" encrypt -a "$alg" -k "$key" \
				"${ivarg[@]}" | bin2hex)
			if [ "$got" != "$ct" ]; then
				nbad=$((nbad + 1))
				echo "  $alg encrypt mismatch: key=$key iv=$iv pt=$pt: got $got want $ct" >&2
			fi
			got=$(hex2bin "$ct" | "$CTL" decrypt -a "$alg" -k "$key" \
				"${ivarg[@]}" | bin2hex)
			if [ "$got" != "$pt" ]; then
				nbad=$((nbad + 1))
				echo "  $alg decrypt mismatch: key=$key iv=$iv ct=$ct: got $got want $pt" >&2
			fi
		done < <(cavp_vectors "$f")
	done
	check "NIST $alg $(basename "$1" .rsp)...: $n vectors both ways ($nbad mismatches)" \
		test "$n" -gt 0 -a "$nbad" -eq 0
}

if [ -d "$AESVEC" ]; then
	for bits in 128 192 256; do
		run_cavp "aes-$bits-cbc" "$AESVEC/CBC/CBCMMT$bits.rsp" \
			"$AESVEC/CBC/CBCGFSbox$bits.rsp"
		run_cavp "aes-$bits-ecb" "$AESVEC/ECB/ECBMMT$bits.rsp" \
			"$AESVEC/ECB/ECBVarKey$bits.rsp"
		# RFC 3686's vectors, in the full-block counter convention.
		run_cavp "aes-$bits-ctr" "$AESVEC/CTR/aes-$bits-ctr.txt"
	done
	for bits in 128 256; do
		run_cavp "aes-$bits-xts" \
			"$AESVEC/XTS/tweak-128hexstr/XTSGenAES$bits.rsp"
	done

	# GCM hashes an IV of another length into J0; the openssl engine
	# takes 1..16 bytes. The first 8-bit-IV vector with data of each file.
	for bits in 128 192 256; do
		read -r key iv pt aad ct tag < <(awk '
		{ sub(/\r$/, "") }
		/^\[IVlen = / { iv8 = $3 + 0 == 8 }
		/^\[PTlen = / { ptlen = $3 + 0 }
		!iv8 || !ptlen { next }
		/^Key = / { key = $3 }
		/^IV = / { iv = $3 }
		/^PT = / { pt = $3 }
		/^AAD = / { aad = $3 == "" ? "-" : $3 }
		/^CT = / { ct = $3 }
		/^Tag = / { print key, iv, pt, aad, ct, $3; exit }
		' "$VEC/gcmEncryptExtIV$bits.rsp")
		[ "$aad" = - ] && aad=
		kat "NIST gcmEncryptExtIV$bits, 8-bit IV, --engine openssl" \
			"aes-$bits-gcm" "$key" "$iv" "$pt" "$ct$tag" \
			--engine openssl --aad "$aad" --tag-len $((${#tag} / 2))
	done

	# GMAC is GCM with no plaintext: the NIST GCM vectors with PTlen 0
	# are GMAC vectors, their AAD the data. Of those, the ones with no
	# data and with the longest (90 bytes), every tag length.
	gmac_data_ok() { [ "$1" = - ] || [ ${#1} -eq 180 ]; }
	for bits in 128 192 256; do
		n=0 nbad=0
		while read -r key iv pt aad ct tag; do
			[ "$pt" = - ] && gmac_data_ok "$aad" || continue
			[ "$aad" = - ] && aad=
			n=$((n + 1))
			got=$(hex2bin "$aad" | "$CTL" encrypt -a "aes-$bits-gmac" \
				-k "$key" -i "$iv" --tag-len $((${#tag} / 2)) | bin2hex)
			if [ "$got" != "$tag" ]; then
				nbad=$((nbad + 1))
				echo "  gmac mismatch: key=$key iv=$iv data=$aad: got $got want $tag" >&2
			fi
		done < <(nist_vectors "$VEC/gcmEncryptExtIV$bits.rsp")
		check "NIST gcmEncryptExtIV$bits PTlen 0 as aes-gmac: $n vectors ($nbad mismatches)" \
			test "$n" -gt 0 -a "$nbad" -eq 0

		n=0 nbad=0 nfail=0
		while read -r key iv pt aad ct tag; do
			[ "$pt" = - ] || [ "$pt" = FAIL ] || continue
			[ "$ct" = - ] && gmac_data_ok "$aad" || continue
			[ "$aad" = - ] && aad=
			n=$((n + 1))
			hex2bin "$aad" | "$CTL" decrypt -a aes-gmac -k "$key" \
				-i "$iv" -t "$tag" >"$out" 2>"$err"
			rc=$?
			want=0
			[ "$pt" = FAIL ] && want=3 nfail=$((nfail + 1))
			[ "$rc" -eq "$want" ] && [ ! -s "$out" ] && continue
			nbad=$((nbad + 1))
			echo "  gmac verify: key=$key iv=$iv data=$aad tag=$tag: rc=$rc, want $want" >&2
		done < <(nist_vectors "$VEC/gcmDecrypt$bits.rsp")
		check "NIST gcmDecrypt$bits PTlen 0 as aes-gmac: $n verified silently ($nfail must fail)" \
			test "$n" -gt 0 -a "$nfail" -gt 0 -a "$nbad" -eq 0
	done
else
	echo "  skipped NIST: $AESVEC missing (Debian: python3-cryptography-vectors)"
fi

# HMAC through authenc: with no data the ciphertext is empty and the tag
# is HMAC(auth key, AAD) truncated. RFC 2404 (HMAC-SHA-1-96) cases 1-5;
# RFC 4231 cases 1-4 truncated to 128 bits as RFC 4868 does.
# hmac_kat ALG AUTH_KEY MSG MAC DESC [KEY]
hmac_kat()
{
	local alg=$1 akey=$2 msg=$3 mac=$4 desc=$5 key=${6:-$K16} got
	got=$("$CTL" encrypt -a "$alg" -k "$key" -i "$IV16" --auth-key "$akey" \
		--aad "$msg" </dev/null | bin2hex)
	check "$desc: tag" test "$got" = "$mac"
	[ "$got" = "$mac" ] || echo "  got $got" >&2
	ctl decrypt -a "$alg" -k "$key" -i "$IV16" --auth-key "$akey" \
		--aad "$msg" -t "$mac" </dev/null
	check "$desc: verifies, writes nothing" test "$rc" -eq 0 -a ! -s "$out"
}
dd50=$(printf 'dd%.0s' $(seq 50))
cd50=$(printf 'cd%.0s' $(seq 50))
hi=$(printf 'Hi There' | bin2hex)
jefe=$(printf 'Jefe' | bin2hex)
what=$(printf 'what do ya want for nothing?' | bin2hex)
k0b=$(printf '0b%.0s' $(seq 20))
kaa=$(printf 'aa%.0s' $(seq 20))
k0c=$(printf '0c%.0s' $(seq 20))
k25=0102030405060708090a0b0c0d0e0f10111213141516171819
hmac_kat aes-cbc-hmac-sha1 "$k0b" "$hi" b617318655057264e28bc0b6 "RFC 2404 case 1"
hmac_kat 'authenc(hmac(sha1),cbc(aes))' "$jefe" "$what" effcdf6ae5eb2fa2d27416d5 \
	"RFC 2404 case 2 (kernel name)"
hmac_kat aes-cbc-hmac-sha1 "$kaa" "$dd50" 125d7342b9ac11cd91a39af4 "RFC 2404 case 3"
hmac_kat aes-256-cbc-hmac-sha1 "$k25" "$cd50" 4c9007f4026250c6bc8414f9 \
	"RFC 2404 case 4" "$K32"
hmac_kat aes-cbc-hmac-sha1 "$k0c" "$(printf 'Test With Truncation' | bin2hex)" \
	4c1a03424b55e07fe7f27be1 "RFC 2404 case 5"
hmac_kat aes-cbc-hmac-sha256 "$k0b" "$hi" b0344c61d8db38535ca8afceaf0bf12b \
	"RFC 4231 case 1"
hmac_kat 'authenc(hmac(sha256),cbc(aes))' "$jefe" "$what" \
	5bdcc146bf60754e6a042426089575c7 "RFC 4231 case 2 (kernel name)"
hmac_kat aes-cbc-hmac-sha256 "$kaa" "$dd50" 773ea91e36800e46854db8ebd09181a7 \
	"RFC 4231 case 3"
hmac_kat aes-cbc-hmac-sha256 "$k25" "$cd50" 82558a389a443c0ea4cc819899f2083a \
	"RFC 4231 case 4"

# ---------------------------------------------------------------------------
section "round trips"
for len in 0 1 15 16 17 4096 100000 1048576; do
	key=$(randhex 32)
	iv=$(randhex 12)
	aad=$(randhex $((len % 37)))
	head -c "$len" /dev/urandom >"$tmp/pt"
	"$CTL" encrypt -k "$key" -i "$iv" --aad "$aad" <"$tmp/pt" >"$tmp/ct"
	check "encrypt $len bytes: exit 0" test $? -eq 0
	check "encrypt $len bytes: ciphertext and 16-byte tag" \
		test "$(stat -c %s "$tmp/ct")" -eq $((len + 16))
	"$CTL" decrypt -k "$key" -i "$iv" --aad "$aad" <"$tmp/ct" >"$tmp/rt"
	check "decrypt $len bytes: exit 0" test $? -eq 0
	check "decrypt $len bytes: round trip" cmp -s "$tmp/pt" "$tmp/rt"
done

key=$(randhex 24)
iv=$(randhex 12)
head -c 1000 /dev/urandom >"$tmp/pt"
"$CTL" encrypt -a aes-192-gcm -k "$key" -i "$iv" --tag-len 12 <"$tmp/pt" >"$tmp/ct"
check "--tag-len 12 appends 12 bytes" test "$(stat -c %s "$tmp/ct")" -eq 1012
tag=$(tail -c 12 "$tmp/ct" | bin2hex)
head -c 1000 "$tmp/ct" | "$CTL" decrypt -k "$key" -i "$iv" -t "$tag" >"$tmp/rt"
check "decrypt: a 12-byte --tag sets the tag length" cmp -s "$tmp/pt" "$tmp/rt"
"$CTL" decrypt -k "$key" -i "$iv" --tag-len 12 <"$tmp/ct" >"$tmp/rt"
check "decrypt --tag-len 12, appended tag" cmp -s "$tmp/pt" "$tmp/rt"

printf '%s\n' "$key" >"$tmp/keyfile"
"$CTL" decrypt --key-file "$tmp/keyfile" -i "$iv" --tag-len 12 <"$tmp/ct" >"$tmp/rt"
check "--key-file" cmp -s "$tmp/pt" "$tmp/rt"

"$CTL" encrypt -a null <"$tmp/pt" >"$tmp/rt"
check "null: exit 0" test $? -eq 0
check "null: output = input, no tag" cmp -s "$tmp/pt" "$tmp/rt"
"$CTL" decrypt -a null <"$tmp/pt" >"$tmp/rt"
check "null decrypt: output = input" cmp -s "$tmp/pt" "$tmp/rt"

# ---------------------------------------------------------------------------
section "round trips: every algorithm, every engine, with and without a session"
ALGS_RUN="aes-gcm aes-gmac aes-cbc aes-ctr aes-ecb aes-xts aes-cbc-hmac-sha1
aes-cbc-hmac-sha256 aes-cbc-null null"
# alg_args ALG: options for ALG with fresh keys, in the array args; the
# tag it appends in tag_len; its length rule in len_rule.
alg_args()
{
	tag_len=0 len_rule=any
	case $1 in
	aes-gcm) args=(-k "$(randhex 32)" -i "$(randhex 12)" --aad "$(randhex 20)")
		tag_len=16 ;;
	aes-gmac) args=(-k "$(randhex 24)" -i "$(randhex 12)") tag_len=16 ;;
	aes-cbc | aes-cbc-null) args=(-k "$(randhex 24)" -i "$(randhex 16)")
		len_rule=blocks ;;
	aes-ctr) args=(-k "$(randhex 16)" -i "$(randhex 16)") ;;
	aes-ecb) args=(-k "$(randhex 32)") len_rule=blocks ;;
	aes-xts) args=(-k "$(randhex 64)" -i "$(randhex 16)") len_rule=min16 ;;
	aes-cbc-hmac-sha1 | aes-cbc-hmac-sha256)
		args=(-k "$(randhex 16)" -i "$(randhex 16)" --auth-key "$(randhex 32)"
			--aad "$(randhex 24)") len_rule=blocks tag_len=12
		[ "$1" = aes-cbc-hmac-sha256 ] && tag_len=16 ;;
	null) args=() ;;
	esac
}
# how_opts WAY: the options of one way to run an op, in the array extra:
# the default engine, session-less, or a named engine.
how_opts()
{
	case $1 in
	default) extra=() ;;
	sessionless) extra=(--sessionless) ;;
	*) extra=(--engine "$1") ;;
	esac
}
for alg in $ALGS_RUN; do
	alg_args "$alg"
	hows="default sessionless $(engines_of "$alg")"
	n=0 nbad=0
	# 65536: one past ipsec-mb's 16-bit multi-buffer lengths.
	for len in 0 17 4097 65536 1048577; do
		case $len_rule in
		blocks) len=$((len - len % 16)) ;;
		min16) [ "$len" -lt 16 ] && len=16 ;;
		esac
		head -c "$len" /dev/urandom >"$tmp/pt"
		want_ct=$((len + tag_len))
		[ "$alg" = aes-gmac ] && want_ct=$tag_len
		# Each way encrypts; all that succeed must agree; each way
		# decrypts the first that succeeded.
		ref=
		for how in $hows; do
			how_opts "$how"
			n=$((n + 1))
			"$CTL" encrypt -a "$alg" "${args[@]}" "${extra[@]}" \
				<"$tmp/pt" >"$tmp/ct.$how" 2>"$err"
			rc=$?
			if [ $rc -ne 0 ] || [ "$(stat -c %s "$tmp/ct.$how")" -ne $want_ct ]; then
				nbad=$((nbad + 1))
				echo "  $alg ($how) encrypt $len bytes: rc=$rc, $(stat -c %s "$tmp/ct.$how") bytes, want $want_ct: $(cat "$err")" >&2
			elif [ -z "$ref" ]; then
				ref=$tmp/ct.$how
			elif ! cmp -s "$ref" "$tmp/ct.$how"; then
				nbad=$((nbad + 1))
				echo "  $alg ($how) encrypt $len bytes: differs from ${ref##*.}" >&2
			fi
		done
		[ -n "$ref" ] || continue
		if [ "$alg" = aes-gmac ]; then
			# The tag follows the data it authenticates.
			cat "$tmp/pt" "$ref" >"$tmp/in"
			: >"$tmp/want"
		else
			cp "$ref" "$tmp/in"
			cp "$tmp/pt" "$tmp/want"
		fi
		for how in $hows; do
			how_opts "$how"
			n=$((n + 1))
			"$CTL" decrypt -a "$alg" "${args[@]}" "${extra[@]}" \
				<"$tmp/in" >"$tmp/rt" 2>"$err"
			rc=$?
			if [ $rc -ne 0 ] || ! cmp -s "$tmp/want" "$tmp/rt"; then
				nbad=$((nbad + 1))
				echo "  $alg ($how) decrypt $len bytes: rc=$rc: $(cat "$err")" >&2
			fi
		done
	done
	check "$alg: $n runs at 0..1 MiB, the same on every way ($hows; $nbad bad)" \
		test "$nbad" -eq 0
done

# Keys from files; the tag in hex; a shorter GMAC tag.
key=$(randhex 32)
akey=$(randhex 64)
iv=$(randhex 16)
printf '%s\n' "$key" >"$tmp/keyfile"
printf '  %s\n\n' "$akey" >"$tmp/akeyfile"
head -c 4096 /dev/urandom >"$tmp/pt"
"$CTL" encrypt -a aes-256-cbc-hmac-sha256 -k "$key" -i "$iv" \
	--auth-key "$akey" <"$tmp/pt" >"$tmp/ct"
"$CTL" decrypt -a aes-cbc-hmac-sha256 --key-file "$tmp/keyfile" -i "$iv" \
	--auth-key-file "$tmp/akeyfile" <"$tmp/ct" >"$tmp/rt"
check "--key-file and --auth-key-file" cmp -s "$tmp/pt" "$tmp/rt"
"$CTL" encrypt -a aes-cbc-hmac-sha256 -k "$key" -i "$iv" --auth-key "$akey" \
	--tag-out hex <"$tmp/pt" >"$out" 2>"$err"
check "authenc --tag-out hex: ciphertext on stdout, tag on stderr" \
	test "$(bin2hex <"$out")$(cat "$err")" = "$(bin2hex <"$tmp/ct")"
"$CTL" encrypt -a aes-gmac -k "$K16" -i "$IV12" --tag-len 8 <"$tmp/pt" >"$out"
check "aes-gmac --tag-len 8: 8 bytes out" test "$(stat -c %s "$out")" -eq 8
"$CTL" decrypt -a aes-gmac -k "$K16" -i "$IV12" -t "$(bin2hex <"$out")" \
	<"$tmp/pt" >"$tmp/rt"
check "aes-gmac -t: verifies silently" test $? -eq 0 -a ! -s "$tmp/rt"

# ---------------------------------------------------------------------------
section "input lengths: exit 2, and the op never runs"
head -c 1 /dev/urandom >"$tmp/in1"
head -c 15 /dev/urandom >"$tmp/in15"
head -c 17 /dev/urandom >"$tmp/in17"
head -c 33 /dev/urandom >"$tmp/in33"
expect_usage_from "$tmp/in15" encrypt -a aes-cbc -k "$K16" -i "$IV16"
expect_usage_from "$tmp/in17" decrypt -a aes-cbc -k "$K16" -i "$IV16"
expect_usage_from "$tmp/in1" encrypt -a aes-ecb -k "$K16"
expect_usage_from "$tmp/in17" decrypt -a aes-192-ecb -k "$K16${IV12:0:16}"
expect_usage_from "$tmp/in15" encrypt -a aes-xts -k "$K32" -i "$IV16"
expect_usage_from /dev/null decrypt -a aes-xts -k "$K32" -i "$IV16"
expect_usage_from "$tmp/in17" encrypt -a aes-cbc-hmac-sha1 -k "$K16" \
	-i "$IV16" --auth-key "$AK"
# 33 bytes: 17 of ciphertext and the 16-byte tag.
expect_usage_from "$tmp/in33" decrypt -a aes-cbc-hmac-sha256 -k "$K16" \
	-i "$IV16" --auth-key "$AK"
expect_usage_from "$tmp/in1" encrypt -a aes-cbc-null -k "$K16" -i "$IV16"
expect_usage_from "$tmp/in15" encrypt --sessionless -a aes-ecb -k "$K16"
"$CTL" encrypt -a aes-ctr -k "$K16" -i "$IV16" <"$tmp/in15" >"$out"
check "aes-ctr: 15 bytes are fine" test $? -eq 0 -a "$(stat -c %s "$out")" -eq 15
"$CTL" encrypt -a aes-xts -k "$K32" -i "$IV16" <"$tmp/in17" >"$out"
check "aes-xts: 17 bytes are fine (ciphertext stealing)" \
	test $? -eq 0 -a "$(stat -c %s "$out")" -eq 17

# ---------------------------------------------------------------------------
section "size limit (16 MiB)"
head -c $((16 << 20)) /dev/urandom >"$tmp/big"
key=$(randhex 16)
iv=$(randhex 12)
"$CTL" encrypt -k "$key" -i "$iv" <"$tmp/big" >"$tmp/bigct" 2>"$err"
check "encrypt 16 MiB: exit 0 ($(cat "$err"))" test $? -eq 0
"$CTL" decrypt -k "$key" -i "$iv" <"$tmp/bigct" >"$tmp/bigrt" 2>"$err"
check "decrypt 16 MiB + tag: exit 0 ($(cat "$err"))" test $? -eq 0
check "16 MiB round trip" cmp -s "$tmp/big" "$tmp/bigrt"
echo x >>"$tmp/big"
"$CTL" encrypt -k "$key" -i "$iv" <"$tmp/big" >"$out" 2>"$err"
check "encrypt 16 MiB + 2: exit 1" test $? -eq 1
check "encrypt 16 MiB + 2: nothing on stdout" test ! -s "$out"
check "encrypt 16 MiB + 2: says why" grep -q 'larger than 16 MiB' "$err"
rm -f "$tmp/big" "$tmp/bigct" "$tmp/bigrt"

# ---------------------------------------------------------------------------
section "authentication failures: exit 3, nothing on stdout"
key=$(randhex 16)
iv=$(randhex 12)
aad=$(randhex 20)
head -c 3000 /dev/urandom >"$tmp/pt"
"$CTL" encrypt -k "$key" -i "$iv" --aad "$aad" <"$tmp/pt" >"$tmp/ct"
# flip BYTE_OFFSET: copy of $tmp/ct with one byte inverted, in $tmp/bad
flip()
{
	local hex
	hex=$(bin2hex <"$tmp/ct")
	local i=$(($1 * 2)) b
	b=$(printf '%02x' $((0x${hex:i:2} ^ 0xff)))
	hex2bin "${hex:0:i}$b${hex:i+2}" >"$tmp/bad"
}
expect_auth_fail()
{
	local desc=$1
	shift
	"$CTL" decrypt "$@" >"$out" 2>"$err"
	rc=$?
	check "$desc: exit 3 (got $rc)" test "$rc" -eq 3
	check "$desc: nothing on stdout" test ! -s "$out"
	check "$desc: message" test "$(cat "$err")" = \
		"cryptoctl: authentication failed: tag mismatch"
}
flip 3015
expect_auth_fail "wrong tag" -k "$key" -i "$iv" --aad "$aad" <"$tmp/bad"
flip 100
expect_auth_fail "tampered ciphertext" -k "$key" -i "$iv" --aad "$aad" <"$tmp/bad"
expect_auth_fail "wrong AAD" -k "$key" -i "$iv" --aad "${aad}00" <"$tmp/ct"
expect_auth_fail "no AAD" -k "$key" -i "$iv" <"$tmp/ct"
expect_auth_fail "wrong key" -k "$(randhex 16)" -i "$iv" --aad "$aad" <"$tmp/ct"
expect_auth_fail "wrong --tag" -k "$key" -i "$iv" --aad "$aad" \
	-t "$(randhex 16)" < <(head -c 3000 "$tmp/ct")
# A GCM tag truncated to 12 bytes is the first 12 bytes of the full one:
# read as a 12-byte tag, the last 12 bytes of a 16-byte tag must fail.
expect_auth_fail "--tag-len 12 on a 16-byte tag" -k "$key" -i "$iv" \
	--aad "$aad" --tag-len 12 <"$tmp/ct"
head -c 3012 "$tmp/ct" | "$CTL" decrypt -k "$key" -i "$iv" --aad "$aad" \
	--tag-len 12 >"$tmp/rt"
check "the 16-byte tag truncated to 12 bytes verifies" cmp -s "$tmp/pt" "$tmp/rt"
"$CTL" decrypt -k "$key" -i "$iv" < <(head -c 5 "$tmp/ct") >"$out" 2>"$err"
check "input shorter than the tag: exit 1" test $? -eq 1 -a ! -s "$out"

# The encrypt-then-MAC family: the tag covers AAD and ciphertext.
section "authentication failures: authenc and GMAC"
key=$(randhex 32)
iv=$(randhex 16)
akey=$(randhex 20)
aad=$(randhex 13)
head -c 3008 /dev/urandom >"$tmp/pt"
sha1=(-a aes-cbc-hmac-sha1 -k "$key" -i "$iv" --aad "$aad")
"$CTL" encrypt "${sha1[@]}" --auth-key "$akey" <"$tmp/pt" >"$tmp/ct"
check "aes-cbc-hmac-sha1: 3008 bytes and a 12-byte tag" \
	test "$(stat -c %s "$tmp/ct")" -eq 3020
flip 3015
expect_auth_fail "authenc: wrong tag" "${sha1[@]}" --auth-key "$akey" <"$tmp/bad"
flip 100
expect_auth_fail "authenc: tampered ciphertext" "${sha1[@]}" \
	--auth-key "$akey" <"$tmp/bad"
flip 0
expect_auth_fail "authenc: tampered first block" "${sha1[@]}" \
	--auth-key "$akey" <"$tmp/bad"
expect_auth_fail "authenc: wrong auth key" "${sha1[@]}" \
	--auth-key "$(randhex 20)" <"$tmp/ct"
expect_auth_fail "authenc: auth key one byte short" "${sha1[@]}" \
	--auth-key "${akey:0:38}" <"$tmp/ct"
expect_auth_fail "authenc: wrong AAD" -a aes-cbc-hmac-sha1 -k "$key" -i "$iv" \
	--aad "${aad}00" --auth-key "$akey" <"$tmp/ct"
expect_auth_fail "authenc: wrong --tag" "${sha1[@]}" --auth-key "$akey" \
	-t "$(randhex 12)" < <(head -c 3008 "$tmp/ct")
expect_auth_fail "authenc: wrong auth key, session-less" "${sha1[@]}" \
	--auth-key "$(randhex 20)" --sessionless <"$tmp/ct"
# Encrypt-then-MAC: the tag is HMAC(auth key, AAD || C), so a wrong
# cipher key still verifies and decrypts to garbage.
"$CTL" decrypt -a aes-cbc-hmac-sha1 -k "$(randhex 32)" -i "$iv" --aad "$aad" \
	--auth-key "$akey" <"$tmp/ct" >"$tmp/rt"
check "authenc: the tag does not depend on the cipher key" \
	test $? -eq 0 -a "$(stat -c %s "$tmp/rt")" -eq 3008
cmp -s "$tmp/pt" "$tmp/rt"
check "authenc: ... but the plaintext does" test $? -ne 0

"$CTL" encrypt -a aes-gmac -k "$key" -i "$IV12" <"$tmp/pt" >"$tmp/tag"
cat "$tmp/pt" "$tmp/tag" >"$tmp/ct"
flip 2000
expect_auth_fail "gmac: tampered data" -a aes-gmac -k "$key" -i "$IV12" <"$tmp/bad"
flip 3020
expect_auth_fail "gmac: wrong tag" -a aes-gmac -k "$key" -i "$IV12" <"$tmp/bad"
expect_auth_fail "gmac: wrong key" -a aes-gmac -k "$(randhex 32)" -i "$IV12" \
	<"$tmp/ct"
expect_auth_fail "gmac: wrong --tag, session-less" -a aes-gmac -k "$key" \
	-i "$IV12" -t "$(randhex 16)" --sessionless <"$tmp/pt"

# ---------------------------------------------------------------------------
section "cross-check with independent AES-GCM implementations"
tag_lens=(4 8 12 13 14 15 16)
key_lens=(16 24 32)
if [ -x "$REF" ]; then
	n=0 nbad=0
	for i in $(seq 40); do
		kl=${key_lens[RANDOM % 3]}
		tl=${tag_lens[RANDOM % 7]}
		len=$(((RANDOM * 32768 + RANDOM) % 20000))
		[ $((i % 10)) -eq 0 ] && len=0
		key=$(randhex "$kl")
		iv=$(randhex 12)
		aad=$(randhex $((RANDOM % 200)))
		head -c "$len" /dev/urandom >"$tmp/pt"
		"$CTL" encrypt -k "$key" -i "$iv" --aad "$aad" --tag-len "$tl" \
			<"$tmp/pt" >"$tmp/ct"
		"$REF" enc "$key" "$iv" "$aad" "$tl" <"$tmp/pt" >"$tmp/refct"
		n=$((n + 1))
		if ! cmp -s "$tmp/ct" "$tmp/refct"; then
			nbad=$((nbad + 1))
			echo "  openssl disagrees: key=$key iv=$iv aad=$aad len=$len tag_len=$tl" >&2
			continue
		fi
		# And each side decrypts the other's.
		tag=$(tail -c "$tl" "$tmp/ct" | bin2hex)
		head -c "$len" "$tmp/ct" | "$REF" dec "$key" "$iv" "$aad" "$tl" \
			"$tag" >"$tmp/rt"
		cmp -s "$tmp/pt" "$tmp/rt" || nbad=$((nbad + 1))
		"$CTL" decrypt -k "$key" -i "$iv" --aad "$aad" --tag-len "$tl" \
			<"$tmp/refct" >"$tmp/rt"
		cmp -s "$tmp/pt" "$tmp/rt" || nbad=$((nbad + 1))
	done
	check "OpenSSL EVP agrees on $n random cases ($nbad mismatches)" \
		test "$nbad" -eq 0
else
	echo "  skipped OpenSSL: no gcm_ref helper given"
fi

if python3 -c 'import cryptography.hazmat.primitives.ciphers.aead' 2>/dev/null; then
	cat >"$tmp/ref.py" <<'EOF'
import sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
key, iv, aad, tag_len = sys.argv[1:5]
pt = sys.stdin.buffer.read()
ct = AESGCM(bytes.fromhex(key)).encrypt(bytes.fromhex(iv), pt,
                                        bytes.fromhex(aad) or None)
sys.stdout.buffer.write(ct[:len(pt) + int(tag_len)])
EOF
	n=0 nbad=0
	for i in $(seq 10); do
		kl=${key_lens[RANDOM % 3]}
		tl=${tag_lens[RANDOM % 7]}
		len=$((RANDOM % 5000))
		key=$(randhex "$kl")
		iv=$(randhex 12)
		aad=$(randhex $((RANDOM % 100)))
		head -c "$len" /dev/urandom >"$tmp/pt"
		"$CTL" encrypt -k "$key" -i "$iv" --aad "$aad" --tag-len "$tl" \
			<"$tmp/pt" >"$tmp/ct"
		python3 "$tmp/ref.py" "$key" "$iv" "$aad" "$tl" <"$tmp/pt" \
			>"$tmp/refct"
		n=$((n + 1))
		cmp -s "$tmp/ct" "$tmp/refct" || nbad=$((nbad + 1))
	done
	check "python cryptography agrees on $n random cases ($nbad mismatches)" \
		test "$nbad" -eq 0
else
	echo "  skipped python: the cryptography package is not importable"
fi

# ---------------------------------------------------------------------------
section "cross-check every algorithm with python, on every engine"
if python3 -c 'import cryptography.hazmat.primitives.ciphers' 2>/dev/null; then
	# One line per case: ALG KEY IV AAD AUTH_KEY PLAIN OUT in hex ('-'
	# for empty), OUT being what encrypt writes.
	cat >"$tmp/xref.py" <<'EOF'
import hashlib, hmac, os, random, sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

BLOCKS = ("aes-cbc", "aes-ecb", "aes-cbc-null", "aes-cbc-hmac-sha1",
          "aes-cbc-hmac-sha256")

def aes(mode, key, data):
    e = Cipher(algorithms.AES(key), mode).encryptor()
    return e.update(data) + e.finalize()

def case(alg, iv=None):
    key = os.urandom(random.choice((16, 24, 32)))
    aad = akey = b""
    n = random.randrange(0, 3000)
    if alg in BLOCKS:
        n -= n % 16
    if alg == "aes-xts":
        key = os.urandom(random.choice((32, 64)))
        n = max(n, 16)
    pt = os.urandom(n)
    if iv is None:
        iv = os.urandom(12 if alg in ("aes-gcm", "aes-gmac") else 16)
    if alg == "aes-gcm":
        aad = os.urandom(random.randrange(0, 100))
        out = AESGCM(key).encrypt(iv, pt, aad)
    elif alg == "aes-gmac":
        out = AESGCM(key).encrypt(iv, b"", pt)
    elif alg in ("aes-cbc", "aes-cbc-null"):
        out = aes(modes.CBC(iv), key, pt)
    elif alg == "aes-ctr":
        out = aes(modes.CTR(iv), key, pt)
    elif alg == "aes-ecb":
        iv = b""
        out = aes(modes.ECB(), key, pt)
    elif alg == "aes-xts":
        out = aes(modes.XTS(iv), key, pt)
    elif alg.startswith("aes-cbc-hmac-"):
        sha1 = alg.endswith("sha1")
        aad = os.urandom(random.randrange(0, 100))
        akey = os.urandom(random.randrange(1, 65))
        ct = aes(modes.CBC(iv), key, pt)
        mac = hmac.new(akey, aad + ct, hashlib.sha1 if sha1 else hashlib.sha256)
        out = ct + mac.digest()[:12 if sha1 else 16]
    else:  # null
        key = iv = b""
        out = pt
    return alg, key, iv, aad, akey, pt, out

cases = [case(a) for a in sys.argv[2:] for _ in range(int(sys.argv[1]))]
# The counter carries through all 128 bits, as in OpenSSL and the kernel.
cases += [case("aes-ctr", bytes.fromhex(iv)) for iv in
          ("0000000000000000fffffffffffffffe", "fffffffffffffffffffffffffffffffe")]
for c in cases:
    print(" ".join(x if isinstance(x, str) else (x.hex() or "-") for x in c))
EOF
	declare -A xn xbad
	while read -r alg key iv aad akey pt want; do
		args=(-a "$alg")
		[ "$key" != - ] && args+=(-k "$key")
		[ "$iv" != - ] && args+=(-i "$iv")
		[ "$aad" != - ] && args+=(--aad "$aad")
		[ "$akey" != - ] && args+=(--auth-key "$akey")
		[ "$pt" = - ] && pt=
		[ "$want" = - ] && want=
		hex2bin "$pt" >"$tmp/pt"
		if [ "$alg" = aes-gmac ]; then
			hex2bin "$pt$want" >"$tmp/ct"
			dwant=
		else
			hex2bin "$want" >"$tmp/ct"
			dwant=$pt
		fi
		for how in default sessionless $(engines_of "$alg"); do
			how_opts "$how"
			xn[$alg]=$((${xn[$alg]:-0} + 1))
			got=$("$CTL" encrypt "${args[@]}" "${extra[@]}" <"$tmp/pt" | bin2hex)
			if [ "$got" != "$want" ]; then
				xbad[$alg]=$((${xbad[$alg]:-0} + 1))
				echo "  $alg ($how) encrypt: ${args[*]} pt=$pt: got $got want $want" >&2
			fi
			got=$("$CTL" decrypt "${args[@]}" "${extra[@]}" <"$tmp/ct" | bin2hex)
			if [ "$got" != "$dwant" ]; then
				xbad[$alg]=$((${xbad[$alg]:-0} + 1))
				echo "  $alg ($how) decrypt: ${args[*]} in=$(bin2hex <"$tmp/ct"): got $got want $dwant" >&2
			fi
		done
	done < <(python3 "$tmp/xref.py" "$XCHECK_PER_ALG" $ALGS_RUN)
	for alg in $ALGS_RUN; do
		check "$alg: python agrees on ${xn[$alg]:-0} encrypt+decrypt runs (engines: default, session-less, $(engines_of "$alg"); ${xbad[$alg]:-0} bad)" \
			test "${xn[$alg]:-0}" -gt 0 -a "${xbad[$alg]:-0}" -eq 0
	done
else
	echo "  skipped: the cryptography package is not importable"
fi

# ---------------------------------------------------------------------------
section "the keys do not stay in argv"
mkfifo "$tmp/fifo"
# argv_wiped DESC SECRET1 SECRET2 ARGS...: while 'cryptoctl ARGS' waits
# for stdin, neither secret is in its /proc/PID/cmdline.
argv_wiped()
{
	local desc=$1 s1=$2 s2=$3 cpid cmdline seen_exec=0 wiped=0
	shift 3
	"$CTL" "$@" <"$tmp/fifo" >/dev/null 2>&1 &
	cpid=$!
	exec 9>"$tmp/fifo"
	for _ in $(seq 100); do
		cmdline=$(tr '\0' ' ' <"/proc/$cpid/cmdline" 2>/dev/null)
		case $cmdline in
		"$CTL $1 "*) seen_exec=1 ;;
		*) sleep 0.02; continue ;;
		esac
		case $cmdline in
		*"$s1"* | *"$s2"*) sleep 0.02 ;;
		*) wiped=1; break ;;
		esac
	done
	exec 9>&-
	wait "$cpid"
	check "$desc" test "$seen_exec" -eq 1 -a "$wiped" -eq 1
}
key=$(randhex 16)
argv_wiped "the key hex is wiped from /proc/PID/cmdline" "$key" "$key" \
	encrypt -k "$key" -i "$IV12"
key=$(randhex 32)
akey=$(randhex 40)
argv_wiped "--key and --auth-key are wiped from /proc/PID/cmdline" \
	"$key" "$akey" encrypt -a aes-cbc-hmac-sha256 -k "$key" -i "$IV16" \
	--auth-key "$akey"
argv_wiped "... with --sessionless too" "$key" "$akey" \
	decrypt -a aes-cbc-hmac-sha256 -k "$key" -i "$IV16" --auth-key "$akey" \
	--sessionless

# ---------------------------------------------------------------------------
section "stats"
json_sum()
{
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(e[sys.argv[2]] for e in d["engines"]))' "$1" "$2"
}
ctl stats --json
cp "$out" "$tmp/stats1.json"
check "stats --json: exit 0" test "$rc" -eq 0
check "stats --json parses" python3 -m json.tool "$tmp/stats1.json" >/dev/null

key=$(randhex 16)
iv=$(randhex 12)
head -c 1000 /dev/urandom >"$tmp/pt"
for _ in 1 2 3 4 5; do
	"$CTL" encrypt -k "$key" -i "$iv" <"$tmp/pt" >"$tmp/ct"
done
flip 10
"$CTL" decrypt -k "$key" -i "$iv" <"$tmp/bad" >/dev/null 2>&1

ctl stats --json
cp "$out" "$tmp/stats2.json"
check "stats --json parses after ops" \
	python3 -m json.tool "$tmp/stats2.json" >/dev/null
ops1=$(json_sum "$tmp/stats1.json" ops)
ops2=$(json_sum "$tmp/stats2.json" ops)
bytes1=$(json_sum "$tmp/stats1.json" bytes)
bytes2=$(json_sum "$tmp/stats2.json" bytes)
af1=$(json_sum "$tmp/stats1.json" auth_failures)
af2=$(json_sum "$tmp/stats2.json" auth_failures)
check "engine ops grew by >= 5 ($ops1 -> $ops2)" \
	test $((ops2 - ops1)) -ge 5
check "engine bytes grew by >= 5000 ($bytes1 -> $bytes2)" \
	test $((bytes2 - bytes1)) -ge 5000
check "engine auth failures grew ($af1 -> $af2)" test $((af2 - af1)) -ge 1

ctl stats
check "stats: exit 0" test "$rc" -eq 0
check "stats: header line" grep -Eq '^uptime .*workers [0-9]+.*clients [0-9]+.*sessions [0-9]+' "$out"
check "stats: engine table" grep -Eq '^ENGINE +OPS +BYTES +ERRORS +AUTH-FAIL$' "$out"
# The engine that ran the ops above shows them (columns align under the
# header: every engine row has as many fields as the header).
check "stats: an engine row with ops" \
	awk '/^ENGINE/ { t = 1; n = NF; next } t && NF == 0 { exit } t && NF == n && $2 > 0 { f = 1 } END { exit !f }' "$out"

if [ -x "$HOLD" ]; then
	# The daemon keeps printable ASCII only; quote and backslash must be
	# escaped in JSON.
	name='cli "q" \back'
	coproc "$HOLD" "$sock" "$name" 7 512
	hpid=$COPROC_PID
	read -r -t 10 ready <&"${COPROC[0]}"
	check "hold_queue ready" test "${ready:-}" = ready
	ctl stats --json
	cp "$out" "$tmp/stats3.json"
	check "stats --json with a queue parses" \
		python3 -m json.tool "$tmp/stats3.json" >/dev/null
	python3 - "$tmp/stats3.json" "$hpid" "$name" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
q = [q for q in d["queues"] if q["pid"] == int(sys.argv[2])]
assert len(q) == 1, d["queues"]
q = q[0]
assert q["client_name"] == sys.argv[3], q
assert q["ops"] >= 7 and q["bytes"] >= 7 * 512, q
assert q["in_flight"] == 0, q
EOF
	check "stats --json: the queue's pid, name (escaped), ops" test $? -eq 0
	ctl stats
	check "stats: queue table" grep -Eq '^CLIENT +QUEUE +PID +UID +SESSIONS +IN-FLIGHT +OPS +BYTES +ERRORS +AUTH-FAIL +RETRIES +EMPTY-POLLS +WAKEUPS +NAME$' "$out"
	check "stats: queue row with pid and name" \
		grep -Eq "^ *[0-9]+ +[0-9]+ +$hpid +[0-9]+ +[0-9]+ +0 +[0-9]+ .* cli \"q\" \\\\back$" "$out"
	exec {COPROC[1]}>&-
	wait "$hpid"
	hpid=
else
	echo "  skipped queue rows: no hold_queue helper given"
fi

# ---------------------------------------------------------------------------
section "daemon unreachable: exit 1"
nosock=$tmp/nowhere.sock
ctl --socket "$nosock" ping
check "ping: exit 1" test "$rc" -eq 1
check "ping: one line naming the socket" \
	grep -q "^cryptoctl: cannot connect to $nosock: .*is cryptod running?" "$err"
check "ping: one line" test "$(lines "$err")" -eq 1
CRYPTOD_SOCKET=$nosock "$CTL" stats >"$out" 2>"$err"
check "stats via \$CRYPTOD_SOCKET: exit 1" test $? -eq 1
check "stats: names the socket" grep -q "cannot connect to $nosock" "$err"
echo hello | "$CTL" --socket "$nosock" encrypt -k "$K16" -i "$IV12" >"$out" 2>"$err"
check "encrypt: exit 1" test $? -eq 1
check "encrypt: nothing on stdout" test ! -s "$out"

# ---------------------------------------------------------------------------
section "stop cryptod with SIGTERM"
kill -TERM "$dpid"
for _ in $(seq 100); do
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$dpid" 2>/dev/null; then
	bad "cryptod still running 10 s after SIGTERM"
else
	wait "$dpid"
	drc=$?
	check "cryptod exits 0 on SIGTERM (got $drc)" test "$drc" -eq 0
fi
dpid=
ctl ping
check "ping after the daemon stopped: exit 1" test "$rc" -eq 1

echo "cryptoctl: $pass checks passed, $fail failed"
if [ "$fail" -ne 0 ]; then
	echo "--- cryptod log (tail)" >&2
	tail -n 30 "$tmp/daemon.log" >&2
	exit 1
fi
exit 0
