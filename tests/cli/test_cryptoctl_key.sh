#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl key: create, import, list, show, rotate, wrap, unwrap, delete
# against a daemon whose KEK is a credential in a private
# $CREDENTIALS_DIRECTORY. The wrap of an exportable key is unwrapped with
# Python's cryptography (RFC 5649) to learn its bytes, which then must
# appear in no output of list or show, text or JSON, nor in the key files.
#
#   test_cryptoctl_key.sh CRYPTOD CRYPTOCTL   (cryptoctl_lib.sh)
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

if ! python3 -c 'import cryptography.hazmat.primitives.keywrap' 2>/dev/null; then
	echo "skipped: python3-cryptography is needed"
	exit 77
fi

unwrap_py()
{
	python3 - "$1" "$2" <<'PY'
import sys
from cryptography.hazmat.primitives.keywrap import aes_key_unwrap_with_padding
print(aes_key_unwrap_with_padding(bytes.fromhex(sys.argv[1]),
				  bytes.fromhex(sys.argv[2])).hex())
PY
}
wrap_py()
{
	python3 - "$1" "$2" <<'PY'
import sys
from cryptography.hazmat.primitives.keywrap import aes_key_wrap_with_padding
print(aes_key_wrap_with_padding(bytes.fromhex(sys.argv[1]),
				bytes.fromhex(sys.argv[2])).hex())
PY
}

WK=$(randhex 32)
echo "$WK" >"$tmp/wk"

# ---------------------------------------------------------------------------
section "create, list, show"
ctl key create k1 --alg aes-gcm --exportable
check "create k1: exit 0" test "$rc" -eq 0
check "create k1: its row" grep -q '^k1 *aes-gcm *256 *1 *encrypt,decrypt *yes' "$out"
ctl key create k1 --alg aes-gcm
check "create k1 again: exit 1, says it exists" \
	eval '[ "$rc" -eq 1 ] && grep -q "exists" "$err"'
ctl key create short --alg aes-gcm --bits 64
check "create a 64-bit AES key: exit 1, says no engine takes it" \
	eval '[ "$rc" -eq 1 ] && grep -q "no engine takes a 8-byte key for aes-gcm" "$err"'
ctl key create mac1 --alg hmac-sha256 --bits 512 --uid 4242 --gid 27
check "create mac1: exit 0" test "$rc" -eq 0
ctl key list --json
check "list --json: exit 0" test "$rc" -eq 0
check "list --json: both keys, their facts" python3 - "$out" <<'PY'
import json, sys
k = {x["name"]: x for x in json.load(open(sys.argv[1]))["keys"]}
a, m = k["k1"], k["mac1"]
assert a["alg"] == "aes-gcm" and a["key_bits"] == 256 and a["exportable"]
assert a["usage"] == ["encrypt", "decrypt"] and a["versions"] == [1]
assert m["usage"] == ["mac-generate", "mac-verify"] and m["key_bits"] == 512
assert m["uids"] == [4242] and m["gids"] == [27] and not m["exportable"]
assert len(a["created"]) == 1 and a["ops"] == 0 and a["last_use"] == 0
PY
ctl key wrap k1 --wrapping-key-file "$tmp/wk"
check "wrap k1: exit 0, 40 bytes of hex" eval '[ "$rc" -eq 0 ] && [ "$(tr -d "\n" <"$out" | wc -c)" -eq 80 ]'
K1=$(unwrap_py "$WK" "$(cat "$out")")
check "wrap k1: RFC 5649, unwraps to 32 bytes" test "${#K1}" -eq 64
ctl key wrap k1 --wrapping-key-file "$tmp/wk" --json
check "wrap k1 --json: name, version, the wrap (unwraps to k1)" python3 - "$out" "$WK" "$K1" <<'PY'
import json, sys
from cryptography.hazmat.primitives.keywrap import aes_key_unwrap_with_padding
d = json.load(open(sys.argv[1]))
assert d["name"] == "k1" and d["version"] == 0, d
assert aes_key_unwrap_with_padding(bytes.fromhex(sys.argv[2]), bytes.fromhex(d["wrapped"])).hex() == sys.argv[3]
PY
for f in "list" "list --json" "show k1" "show k1 --json"; do
	# shellcheck disable=SC2086
	ctl key $f
	check "key $f: no byte of k1 in the output" \
		eval '! grep -qi "${K1:0:16}\|${K1:16:16}\|${K1:32:16}\|${K1:48:16}" "$out" "$err"'
done
# Every 8-byte window of k1, searched in every key file as bytes (not a
# grep pattern made of them: a newline in it would split it into short
# patterns that match anything, and the shell drops NUL bytes).
no_k1_in_files() {
	python3 - "$K1" "$tmp/keys" <<'PY'
import os, sys
k = bytes.fromhex(sys.argv[1])
for root, _, files in os.walk(sys.argv[2]):
    for f in files:
        data = open(os.path.join(root, f), "rb").read()
        if any(k[i:i + 8] in data for i in range(len(k) - 7)):
            sys.exit(1)
PY
}
check "no byte of k1 in the key files" no_k1_in_files

# ---------------------------------------------------------------------------
section "encrypt and decrypt by key name"
IV=$(randhex 12)
head -c 1024 /dev/urandom >"$tmp/pt"
"$CTL" encrypt -a aes-gcm --key-name k1 -i "$IV" <"$tmp/pt" >"$tmp/ct1"
check "encrypt --key-name k1: exit 0" test $? -eq 0
"$CTL" encrypt -a aes-gcm -k "$K1" -i "$IV" <"$tmp/pt" >"$tmp/ct2"
check "encrypt --key-name k1: as with k1's bytes given" cmp -s "$tmp/ct1" "$tmp/ct2"
"$CTL" decrypt -a aes-gcm --key-name k1 -i "$IV" <"$tmp/ct1" >"$tmp/rt"
check "decrypt --key-name k1: the plaintext" cmp -s "$tmp/pt" "$tmp/rt"
# BYTES in 1024-based units by default, the exact count with --exact.
k1_bytes=$("$CTL" key show k1 --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["keys"][0]["bytes"])')
ctl key list
check "list: k1's BYTES ($k1_bytes) in units" grep -qE "^k1 .* [0-9.]+K " "$out"
ctl key list --exact
check "list --exact: k1's BYTES as the integer $k1_bytes" grep -qE "^k1 .* $k1_bytes " "$out"
# A decrypt-only AEAD key streams nothing (a piece before the tag would
# release its keystream): decrypt runs it as one operation.
echo "$K1" >"$tmp/k1hex"
ctl key import dk1 --alg aes-gcm --key-file "$tmp/k1hex" --usage decrypt
check "import dk1 (k1's bytes, decrypt only): exit 0" test "$rc" -eq 0
ctl decrypt -a aes-gcm --key-name dk1 -i "$IV" --in "$tmp/ct1"
check "decrypt --key-name dk1: exit 0, the plaintext" \
	eval '[ "$rc" -eq 0 ] && cmp -s "$tmp/pt" "$out"'
cp "$tmp/ct1" "$tmp/ct1-bad"
flip_at "$tmp/ct1-bad" 5
ctl decrypt -a aes-gcm --key-name dk1 -i "$IV" --in "$tmp/ct1-bad"
check "decrypt --key-name dk1, tampered: exit 3 (tag), no output" \
	eval '[ "$rc" -eq 3 ] && [ ! -s "$out" ]'
ctl key delete dk1
ctl encrypt -a aes-cbc --key-name k1 -i "$(randhex 16)" --in "$tmp/pt"
check "encrypt --key-name with another algorithm: exit 1, says which" \
	eval '[ "$rc" -eq 1 ] && grep -q "the key is for aes-gcm" "$err"'
ctl encrypt -a aes-gcm --key-name mac1 -i "$IV" --in "$tmp/pt"
check "encrypt --key-name of a key not ours: exit 1, access" \
	eval '[ "$rc" -eq 1 ] && grep -q "access" "$err"'
ctl key create mac2 --alg hmac-sha256 --bits 256 --exportable
ctl key wrap mac2 --wrapping-key-file "$tmp/wk"
M2=$(unwrap_py "$WK" "$(cat "$out")")
ctl mac -a hmac-sha256 --key-name mac2 --in "$tmp/pt"
cp "$out" "$tmp/mac-named"
ctl mac -a hmac-sha256 -k "$M2" --in "$tmp/pt"
check "mac --key-name mac2: as with its bytes given" cmp -s "$out" "$tmp/mac-named"
ctl mac -a hmac-sha256 --key-name mac2 --verify "$(cat "$tmp/mac-named")" --in "$tmp/pt"
check "mac --key-name --verify: exit 0" test "$rc" -eq 0
expect_usage digest --key-name mac2
expect_usage encrypt -a aes-gcm --key-name k1 -k "$K1" -i "$IV"
expect_usage encrypt -a aes-gcm --key-name k1 --sessionless -i "$IV"

# ---------------------------------------------------------------------------
section "rotate, import, unwrap, delete"
ctl key rotate k1 --json
check "rotate k1: version 2" eval '[ "$rc" -eq 0 ] && grep -q "\"versions\": \[1, 2\]" "$out"'
ctl key wrap k1 --version 1 --wrapping-key-file "$tmp/wk"
check "wrap k1 version 1: the same bytes as before" \
	test "$(unwrap_py "$WK" "$(cat "$out")")" = "$K1"
ctl key wrap k1 --wrapping-key-file "$tmp/wk"
check "wrap k1 version 2: other bytes" \
	test "$(unwrap_py "$WK" "$(cat "$out")")" != "$K1"
K2=$(randhex 16)
echo "$K2" >"$tmp/k2"
ctl key import k2 --alg aes-cbc --key-file "$tmp/k2" --exportable --usage decrypt
check "import k2: exit 0, 128 bits, decrypt only" \
	eval '[ "$rc" -eq 0 ] && grep -q "^k2 *aes-cbc *128 *1 *decrypt " "$out"'
ctl key wrap k2 --wrapping-key-file "$tmp/wk"
check "wrap k2: the imported bytes" test "$(unwrap_py "$WK" "$(cat "$out")")" = "$K2"
wrap_py "$WK" "$K2" >"$tmp/w2"
ctl key unwrap k3 --alg aes-cbc --wrapping-key-file "$tmp/wk" --wrapped-file "$tmp/w2"
check "unwrap k3 from python's wrap: exit 0" test "$rc" -eq 0
ctl key wrap k3 --wrapping-key-file "$tmp/wk"
check "wrap k3 (not exportable): exit 1, says so" \
	eval '[ "$rc" -eq 1 ] && grep -q "not exportable" "$err"'
flipped=$(sed 's/^./f/' "$tmp/w2")
[ "$flipped" = "$(cat "$tmp/w2")" ] && flipped=$(sed 's/^./0/' "$tmp/w2")
echo "$flipped" >"$tmp/w3"
ctl key unwrap k4 --alg aes-cbc --wrapping-key-file "$tmp/wk" --wrapped-file "$tmp/w3"
check "unwrap a corrupted wrap: exit 1" test "$rc" -eq 1
ctl key show k4
check "show k4: never created" test "$rc" -eq 1
ctl key delete k1
check "delete k1: exit 0" test "$rc" -eq 0
ctl key show k1
check "show k1 after delete: exit 1" test "$rc" -eq 1
check "k1's file is gone" test ! -e "$tmp/keys/k1.key"

# ---------------------------------------------------------------------------
section "one way to name an algorithm; names where ids are asked"
# encrypt -a's names: the size in the name is the key's.
ctl key create n256 --alg aes-256-gcm
check "create --alg aes-256-gcm: exit 0, a 256-bit aes-gcm key" \
	eval '[ "$rc" -eq 0 ] && grep -q "^n256 *aes-gcm *256 " "$out"'
ctl key create n128 --alg aes-128-cbc --bits 128
check "create --alg aes-128-cbc --bits 128: exit 0, 128 bits" \
	eval '[ "$rc" -eq 0 ] && grep -q "^n128 *aes-cbc *128 " "$out"'
ctl key create nxts --alg aes-128-xts
check "create --alg aes-128-xts: two 128-bit halves, 256 bits" \
	eval '[ "$rc" -eq 0 ] && grep -q "^nxts *aes-xts *256 " "$out"'
ctl key create nk --alg 'gcm(aes)' --bits 128
check "create --alg gcm(aes) --bits 128 (the old form): exit 0" \
	eval '[ "$rc" -eq 0 ] && grep -q "^nk *aes-gcm *128 " "$out"'
expect_usage key create nx --alg aes-256-gcm --bits 128
check "--bits against the name's size: says both" grep -q "conflicts with --alg aes-256-gcm (256 bits)" "$err"
expect_usage key create nx --alg aes-192-xts
# sha256 takes no key at all: cryptoctl says so without asking the daemon.
expect_usage key create nx --alg sha256
check "create --alg sha256: a digest takes no key" grep -q "sha256 is a digest: it takes no key" "$err"
expect_usage key create nx --alg aes-cbc-hmac-sha256
check "create --alg aes-cbc-hmac-sha256: two keys" grep -q "takes two keys" "$err"
# Names or numbers for --uid and --gid; listings show the names.
ctl key create nn --alg aes-gcm --uid nobody --uid 4243 --gid "$(id -gn 0)"
check "create --uid nobody --gid $(id -gn 0): exit 0" test "$rc" -eq 0
ctl key list --wide
check "list --wide: the row's ACL: uid and name as id(1) prints them" \
	grep -q "uid $(id -u nobody)(nobody),uid 4243,gid 0($(id -gn 0))" "$out"
ctl key show nn --json
check "show --json: numeric ids, and names beside them (null: none)" python3 - "$out" "$(id -u nobody)" "$(id -gn 0)" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["keys"][0]
assert k["uids"] == [int(sys.argv[2]), 4243] and k["gids"] == [0], k
assert k["user_names"] == ["nobody", None] and k["group_names"] == [sys.argv[3]], k
PY
expect_usage key create nx --alg aes-gcm --uid no-such-user-x
check "--uid of an unknown user: says so" grep -q "no-such-user-x: no such user" "$err"
expect_usage key create nx --alg aes-gcm --gid no-such-group-x
check "--gid of an unknown group: says so" grep -q "no-such-group-x: no such group" "$err"
ctl clients --json
check "clients --json: user and group names beside the ids" python3 - "$out" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["clients"]
assert any(x["uid"] == 0 and x["user"] == "root" and "group" in x for x in c), c
PY
ctl clients --wide
check "clients --wide: USER and GROUP columns" grep -Eq '^CLIENT +PID +UID +USER +GID +GROUP +CONNECTED' "$out"
for k in n256 n128 nxts nk nn; do
	ctl key delete $k
done

# ---------------------------------------------------------------------------
section "usage errors"
expect_usage key
expect_usage key bogus x
expect_usage key show
expect_usage key list extra
expect_usage key create k9
expect_usage key create k9 --alg no-such-alg
expect_usage key create k9 --alg aes-gcm --usage sigh
expect_usage key create k9 --alg aes-gcm --bits 7
expect_usage key import k9 --alg aes-gcm
expect_usage key wrap k2
ctl key --help
check "key --help: exit 0, the access policy" eval '[ "$rc" -eq 0 ] && grep -q "need root" "$out"'

finish "cryptoctl key"
