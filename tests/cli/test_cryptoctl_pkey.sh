#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl sign, verify and derive (docs/asymmetric.md) against openssl:
# keys made by 'openssl genpkey' and read from PEM and DER files; the
# daemon's signatures checked by 'openssl dgst -verify' and 'openssl
# pkeyutl -verify', openssl's checked by 'cryptoctl verify' (exit 0; a
# flipped bit exit 3); derives equal to 'openssl pkeyutl -derive'; and
# the refusals (a key of another algorithm, no key, a public key signing);
# published vectors (RFC 8032 Ed25519, RFC 7748 X25519) exact; the key
# pair counters of cryptoctl stats.
#
#   test_cryptoctl_pkey.sh CRYPTOD CRYPTOCTL   (cryptoctl_lib.sh)
set -u
. "$(dirname "$0")/cryptoctl_lib.sh"

head -c 5000 /dev/urandom >"$tmp/msg"
gen() { openssl genpkey "$@" 2>/dev/null; }
gen -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$tmp/rsa.pem"
gen -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/ec.pem"
gen -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$tmp/ec384.pem"
gen -algorithm ED25519 -out "$tmp/ed.pem"
gen -algorithm X25519 -out "$tmp/x.pem"
gen -algorithm X25519 -out "$tmp/x2.pem"
for k in rsa ec ec384 ed x x2; do
	openssl pkey -in "$tmp/$k.pem" -pubout -out "$tmp/$k.pub" 2>/dev/null
done
openssl pkey -in "$tmp/rsa.pem" -outform DER -out "$tmp/rsa.der" 2>/dev/null

# ---------------------------------------------------------------------------
section "sign: openssl verifies the daemon's signatures"
for d in sha256 sha384 sha512; do
	ctl sign --key-file "$tmp/rsa.pem" -d "$d" --in "$tmp/msg" -o "$tmp/sig"
	check "rsa-2048 PKCS#1 v1.5 $d: openssl dgst -verify" sh -c \
		"[ $rc -eq 0 ] && openssl dgst -$d -verify '$tmp/rsa.pub' -signature '$tmp/sig' '$tmp/msg' >/dev/null"
done
ctl sign --key-file "$tmp/rsa.der" --pss --in "$tmp/msg" -o "$tmp/sig"
check "rsa-2048 PSS sha256 (a DER key file): openssl dgst -verify" sh -c \
	"[ $rc -eq 0 ] && openssl dgst -sha256 -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:digest -verify '$tmp/rsa.pub' -signature '$tmp/sig' '$tmp/msg' >/dev/null"
ctl sign --key-file "$tmp/rsa.pem" --pss --saltlen max --in "$tmp/msg" -o "$tmp/sig"
check "rsa-2048 PSS, salt max: openssl verifies (salt auto)" sh -c \
	"[ $rc -eq 0 ] && openssl dgst -sha256 -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:auto -verify '$tmp/rsa.pub' -signature '$tmp/sig' '$tmp/msg' >/dev/null"
ctl sign --key-file "$tmp/ec.pem" <"$tmp/msg"
cp "$out" "$tmp/sig"
check "ec-p256 from stdin to stdout: openssl dgst -verify" sh -c \
	"[ $rc -eq 0 ] && openssl dgst -sha256 -verify '$tmp/ec.pub' -signature '$tmp/sig' '$tmp/msg' >/dev/null"
openssl dgst -sha384 -binary "$tmp/msg" >"$tmp/dg"
ctl sign --key-file "$tmp/ec384.pem" -d sha384 --prehashed --in "$tmp/dg" -o "$tmp/sig"
check "ec-p384 --prehashed: openssl pkeyutl -verify" sh -c \
	"[ $rc -eq 0 ] && openssl pkeyutl -verify -pubin -inkey '$tmp/ec384.pub' -in '$tmp/dg' -sigfile '$tmp/sig' >/dev/null"
ctl sign --key-file "$tmp/ed.pem" --in "$tmp/msg" -o "$tmp/sig"
openssl pkeyutl -sign -rawin -inkey "$tmp/ed.pem" -in "$tmp/msg" -out "$tmp/sig.ossl" 2>/dev/null
check "ed25519: openssl's very bytes (deterministic)" cmp -s "$tmp/sig" "$tmp/sig.ossl"

section "verify: the daemon checks openssl's signatures"
openssl dgst -sha256 -sign "$tmp/rsa.pem" -out "$tmp/sig" "$tmp/msg"
ctl verify --key-file "$tmp/rsa.pub" --sig "$tmp/sig" --in "$tmp/msg"
check "rsa-2048 (a public key file): exit 0" test "$rc" -eq 0 -a ! -s "$out"
cp "$tmp/sig" "$tmp/ct"
flip 10
mv "$tmp/bad" "$tmp/sig.bad"
ctl verify --key-file "$tmp/rsa.pub" --sig "$tmp/sig.bad" --in "$tmp/msg"
check "  ... a changed byte: exit 3" test "$rc" -eq 3
openssl dgst -sha512 -sign "$tmp/ec.pem" -out "$tmp/sig" "$tmp/msg"
ctl verify --key-file "$tmp/ec.pem" -d sha512 --sig "$tmp/sig" --in "$tmp/msg"
check "ec-p256 sha512 (the private key file): exit 0" test "$rc" -eq 0
ctl verify --key-file "$tmp/ec.pem" -d sha256 --sig "$tmp/sig" --in "$tmp/msg"
check "  ... with another digest: exit 3" test "$rc" -eq 3
ctl verify --key-file "$tmp/ed.pub" --sig "$tmp/sig.ossl" --in "$tmp/msg"
check "ed25519: exit 0" test "$rc" -eq 0

section "derive: as openssl pkeyutl -derive"
for k in x ec; do
	p=x2
	[ "$k" = ec ] && { gen -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/ec2.pem"; openssl pkey -in "$tmp/ec2.pem" -pubout -out "$tmp/ec2.pub" 2>/dev/null; p=ec2; }
	ctl derive --key-file "$tmp/$k.pem" --peer "$tmp/$p.pub" -o "$tmp/z"
	openssl pkeyutl -derive -inkey "$tmp/$p.pem" -peerkey "$tmp/$k.pub" -out "$tmp/z.ossl" 2>/dev/null
	check "$k: the secret openssl derives the other way" sh -c \
		"[ $rc -eq 0 ] && cmp -s '$tmp/z' '$tmp/z.ossl'"
done
head -c 32 /dev/zero >"$tmp/zero"
ctl derive --key-file "$tmp/x.pem" --peer "$tmp/zero"
check "x25519 and a zero point (raw bytes): refused, nothing written" \
	test "$rc" -ne 0 -a ! -s "$out"

section "published vectors (python3-cryptography-vectors)"
# RFC 8032's Ed25519 (djb's sign.input: sk||pk:pk:msg:sig||msg) and RFC
# 7748's X25519 (section 5.2), each private key as PKCS#8 DER: the fixed
# 16-byte prefix of RFC 8410, then the 32 bytes.
vec=/usr/lib/python3/dist-packages/cryptography_vectors/asymmetric
if [ -r "$vec/Ed25519/sign.input" ] && [ -r "$vec/X25519/rfc7748.txt" ]; then
	n=0 good=0
	while IFS=: read -r skpk _ msg sigmsg _; do
		hex2bin "302e020100300506032b657004220420${skpk:0:64}" >"$tmp/v.der"
		hex2bin "$msg" >"$tmp/v.msg"
		ctl sign --key-file "$tmp/v.der" --in "$tmp/v.msg"
		[ $rc -eq 0 ] && [ "$(bin2hex <"$out")" = "${sigmsg:0:128}" ] &&
			good=$((good + 1))
		n=$((n + 1))
	done < <(head -64 "$vec/Ed25519/sign.input")
	check "ed25519: RFC 8032 sign.input, $good of $n signatures exact" \
		test "$n" -eq 64 -a "$good" -eq "$n"
	n=0 good=0
	while read -r sc u z; do
		hex2bin "302e020100300506032b656e04220420$sc" >"$tmp/v.der"
		hex2bin "$u" >"$tmp/v.peer"
		ctl derive --key-file "$tmp/v.der" --peer "$tmp/v.peer"
		[ $rc -eq 0 ] && [ "$(bin2hex <"$out")" = "$z" ] && good=$((good + 1))
		n=$((n + 1))
	done < <(awk '/^INPUT_SCALAR/ { s = $3 } /^INPUT_U/ { u = $3 }
		/^OUTPUT_U/ { print s, u, $3 }' "$vec/X25519/rfc7748.txt")
	check "x25519: RFC 7748 5.2, $good of $n secrets exact" \
		test "$n" -ge 2 -a "$good" -eq "$n"
else
	echo "skip: python3-cryptography-vectors not installed"
fi

section "stats: the key pair ops, exactly"
pk_ops() { # ALG OP: the daemon's count
	"$CTL" stats --json | python3 -c 'import json, sys
n = [k[sys.argv[2]] for k in json.load(sys.stdin)["key_pair_ops"] if k["alg"] == sys.argv[1]]
print(n[0] if n else 0)' "$1" "$2"
}
s0=$(pk_ops ec-p256 sign) v0=$(pk_ops ec-p256 verify) d0=$(pk_ops x25519 derive)
for _ in 1 2 3; do ctl sign --key-file "$tmp/ec.pem" --in "$tmp/msg" -o "$tmp/sig"; done
ctl verify --key-file "$tmp/ec.pub" --sig "$tmp/sig" --in "$tmp/msg"
ctl verify --key-file "$tmp/ec.pub" --sig "$tmp/sig" --in "$tmp/sig"
ctl derive --key-file "$tmp/x.pem" --peer "$tmp/x2.pub" -o "$tmp/z"
check "3 signs, 1 good verify (a bad one not counted), 1 derive" test \
	"$(($(pk_ops ec-p256 sign) - s0)) $(($(pk_ops ec-p256 verify) - v0)) $(($(pk_ops x25519 derive) - d0))" = "3 1 1"
ctl stats --prometheus
check "--prometheus: cryptod_key_pair_ops_total per alg and op" \
	grep -q '^cryptod_key_pair_ops_total{alg="ec-p256",op="sign"} [0-9]' "$out"

section "refusals"
expect_usage sign --in "$tmp/msg"
expect_usage sign --key-file "$tmp/rsa.pem" -a ec-p256 --in "$tmp/msg"
expect_usage sign -k somekey --in "$tmp/msg"
expect_usage sign --key-file "$tmp/rsa.pem" -d md5 --in "$tmp/msg"
expect_usage verify --key-file "$tmp/rsa.pem" --in "$tmp/msg"
expect_usage derive --key-file "$tmp/x.pem"
expect_usage sign --key-file "$tmp/msg" --in "$tmp/msg"
ctl sign --key-file "$tmp/rsa.pub" --in "$tmp/msg"
check "a public key does not sign: exit 1, nothing written" \
	sh -c "[ $rc -eq 1 ] && [ ! -s '$out' ] && grep -q 'policy' '$err'"
ctl sign --key-file "$tmp/x.pem" --in "$tmp/msg"
check "x25519 does not sign: refused" test "$rc" -ne 0 -a ! -s "$out"
ctl sign --help
check "sign --help: the usage" grep -q -- '--key-file' "$out"

finish test_cryptoctl_pkey
