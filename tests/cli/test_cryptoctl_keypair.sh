#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl key with key pairs (issue 28): create --alg rsa-2048 .. x448,
# import --in (PEM, DER, encrypted with --passphrase-file, traditional)
# of keys openssl(1) makes, pub equal to openssl pkey -pubout, show and
# list --json naming the pair's type, the usage words, and the refusals.
#
#   test_cryptoctl_keypair.sh CRYPTOD CRYPTOCTL   (cryptoctl_lib.sh)
set -u

daemon_setup()
{
	mkdir -m 0700 "$tmp/creds"
	head -c 32 /dev/urandom >"$tmp/creds/kek"
	chmod 0400 "$tmp/creds/kek"
	export CREDENTIALS_DIRECTORY=$tmp/creds
	DAEMON_ARGS="--set keys.kek=credential:kek --set keys.dir=$tmp/keys"
}
. "$(dirname "$0")/cryptoctl_lib.sh"

# ---------------------------------------------------------------------------
section "create each key pair; pub is a PEM public key of its type"
for a in rsa-2048 ec-p256 ec-p384 ec-p521 ed25519 ed448 x25519 x448; do
	ctl key create "g-$a" --alg "$a"
	check "create g-$a: exit 0, its row" \
		eval '[ "$rc" -eq 0 ] && grep -q "^g-$a *$a *- *1 " "$out"'
	ctl key pub "g-$a"
	check "pub g-$a: a PEM openssl reads" \
		eval '[ "$rc" -eq 0 ] && openssl pkey -pubin -in "$out" -noout'
done
ctl key show g-rsa-2048 --json
check "show --json: key_pair RSA:2048, key_bits null, all usages" python3 - "$out" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["keys"][0]
assert k["alg"] == "rsa-2048" and k["key_pair"] == "RSA:2048", k
assert k["key_bits"] is None, k
assert k["usage"] == ["encrypt", "decrypt", "sign", "verify"], k
PY
ctl key show g-x25519
check "show g-x25519: derive" grep -q ' derive ' "$out"
ctl key pub g-ec-p256 -o "$tmp/g.pem" --version 1
check "pub -o FILE --version 1: the file, nothing on stdout" \
	eval '[ "$rc" -eq 0 ] && [ ! -s "$out" ] && grep -q "BEGIN PUBLIC KEY" "$tmp/g.pem"'

# ---------------------------------------------------------------------------
section "import what openssl writes"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$tmp/ec.pem" 2>/dev/null
openssl pkey -in "$tmp/ec.pem" -pubout -out "$tmp/ec.pub"
openssl pkey -in "$tmp/ec.pem" -outform DER -out "$tmp/ec.der"
openssl pkey -in "$tmp/ec.pem" -traditional -out "$tmp/ec-trad.pem"
printf 'pa55 word\n' >"$tmp/pass"
openssl pkey -in "$tmp/ec.pem" -aes-256-cbc -passout "file:$tmp/pass" -out "$tmp/ec-enc.pem"
for f in ec.pem ec.der ec-trad.pem; do
	ctl key import "i-$f" --in "$tmp/$f"
	check "import --in $f: exit 0, ec-p384" \
		eval '[ "$rc" -eq 0 ] && grep -q "^i-$f *ec-p384 " "$out"'
	ctl key pub "i-$f"
	check "pub i-$f = openssl pkey -pubout" cmp -s "$out" "$tmp/ec.pub"
done
ctl key import i-enc --alg ec-p384 --in "$tmp/ec-enc.pem" --passphrase-file "$tmp/pass" --usage sign
check "import encrypted --passphrase-file, --usage sign" \
	eval '[ "$rc" -eq 0 ] && grep -q "^i-enc *ec-p384 *- *1 *sign " "$out"'
ctl key pub i-enc
check "pub i-enc = openssl pkey -pubout" cmp -s "$out" "$tmp/ec.pub"
printf 'wrong\n' >"$tmp/wrong"
ctl key import i-bad --in "$tmp/ec-enc.pem" --passphrase-file "$tmp/wrong"
check "wrong passphrase: exit 1, says so" \
	eval '[ "$rc" -eq 1 ] && grep -q "wrong passphrase" "$err"'
ctl key import i-bad --alg ec-p256 --in "$tmp/ec.pem"
check "--alg ec-p256 for a P-384 key: exit 1, names both" \
	eval '[ "$rc" -eq 1 ] && grep -q "the key is ec-p384, the request says ec-p256" "$err"'
ctl key import i-bad --in "$tmp/ec.pub"
check "a public key: exit 1, says so" \
	eval '[ "$rc" -eq 1 ] && grep -q "a public key" "$err"'
head -c 9000 /dev/zero >"$tmp/big"
expect_usage key import i-bad --in "$tmp/big"
expect_usage key import i-bad --alg rsa-2048 --key-file "$tmp/pass"
expect_usage key create i-bad --alg ed25519 --bits 256
expect_usage key create i-bad --alg ed25519 --usage sign,fly
ctl key create i-bad --alg x25519 --usage sign
check "x25519 --usage sign: exit 1, says derive" \
	eval '[ "$rc" -eq 1 ] && grep -q "usage is derive" "$err"'
ctl key create sym --alg aes-gcm
ctl key pub sym
check "pub of a cipher key: exit 1, no public half" \
	eval '[ "$rc" -eq 1 ] && grep -q "no key pair" "$err"'
ctl key list --json
check "list --json: key pairs and cipher keys side by side" python3 - "$out" <<'PY'
import json, sys
k = {x["name"]: x for x in json.load(open(sys.argv[1]))["keys"]}
assert k["sym"]["key_bits"] == 256 and "key_pair" not in k["sym"]
assert k["g-ed448"]["key_pair"] == "ED448"
assert k["i-enc"]["usage"] == ["sign"]
PY
# ---------------------------------------------------------------------------
section "a named pair signs in the daemon; openssl verifies with key pub"
head -c 1000 /dev/urandom >"$tmp/msg"
for k in g-ec-p256:ec-p256 i-ec.pem:ec-p384 g-ed25519:ed25519 g-rsa-2048:rsa-2048; do
	n=${k%%:*} a=${k#*:}
	"$CTL" key pub "$n" -o "$tmp/$n.pub" >/dev/null 2>&1
	ctl sign -k "$n" -a "$a" --in "$tmp/msg" -o "$tmp/$n.sig"
	if [ "$a" = ed25519 ]; then
		v="openssl pkeyutl -verify -pubin -inkey $tmp/$n.pub -rawin -in $tmp/msg -sigfile $tmp/$n.sig"
	else
		v="openssl dgst -sha256 -verify $tmp/$n.pub -signature $tmp/$n.sig $tmp/msg"
	fi
	check "sign -k $n: exit 0, openssl verifies it under key pub's key" \
		eval '[ "$rc" -eq 0 ] && $v >/dev/null'
done
ctl sign -k i-enc -a ec-p384 --in "$tmp/msg" -o "$tmp/enc.sig"
check "sign with the sign-only i-enc: exit 0" test "$rc" -eq 0
ctl key create derive-only --alg ec-p256 --usage derive
ctl sign -k derive-only -a ec-p256 --in "$tmp/msg" -o "$tmp/x.sig"
check "sign with a derive-only key: exit 1" test "$rc" -eq 1

ctl key --help
check "--help: pub, --in, --passphrase-file" \
	eval 'grep -q "cryptoctl key pub NAME" "$out" && grep -q -- "--passphrase-file" "$out"'

finish "cryptoctl key (key pairs)"
