#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl and the 3GPP ciphers (their rules come from the algorithm table
# and the daemon's capabilities, not from a list of cryptoctl's own):
# encrypt and decrypt against the published test sets whose lengths are
# whole bytes (tests/integration/wireless_vectors.c has them all), and
# an unknown name or a bad size still refused with one clear line.
#
#   test_cryptoctl_3gpp.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]   (cryptoctl_lib.sh)
set -u
. "$(dirname "$0")/cryptoctl_lib.sh"

# vec NAME ALG KEY IV PT CT: encrypt PT to CT and decrypt it back.
vec()
{
	local name=$1 alg=$2 key=$3 iv=$4 pt=$5 ct=$6 got
	got=$(hex2bin "$pt" | "$CTL" encrypt -a "$alg" -k "$key" -i "$iv" | bin2hex)
	check "$name encrypt: got $got" test "$got" = "${ct,,}"
	got=$(hex2bin "$ct" | "$CTL" decrypt -a "$alg" -k "$key" -i "$iv" | bin2hex)
	check "$name decrypt: got $got" test "$got" = "${pt,,}"
}

# ---------------------------------------------------------------------------
section "published vectors, whole bytes"
# ETSI/SAGE UEA2 Document 4, test set 3 (120 bits).
vec "UEA2 test set 3" snow3g-uea2 5ACB1D644C0D51204EA5F1451010D852 \
	FA556B261C000000FA556B261C000000 AD9C441F890B38C457A49D421407E8 \
	BA0F31300334C56B52A7497CBAC046
# 3GPP TS 35.203 f8 test set 3 (120 bits).
vec "KASUMI f8 test set 3" kasumi-f8 5ACB1D644C0D51204EA5F1451010D852 \
	FA556B261C000000 AD9C441F890B38C457A49D421407E8 \
	9BC92CA803C67B28A11A4BEE5A0C25
# ETSI/SAGE 128-EEA3 Document 3, test set 2 (800 bits).
vec "EEA3 test set 2" zuc-eea3 E5BD3EA0EB55ADE866C6AC58BD54302A \
	00056823C400000000056823C4000000 \
	14A8EF693D678507BBE7270A7F67FF5006C3525B9807E467C4E56000BA338F5D429559036751822246C80D3B38F07F4BE2D8FF5805F5132229BDE93BBBDCAF382BF1EE972FBF9977BADA8945847A2A6C9AD34A667554E04D1F7FA2C33241BD8F01BA220D \
	131D43E0DEA1BE5C5A1BFD971D852CBF712D7B4F57961FEA3208AFA8BCA433F456AD09C7417E58BC69CF8866D1353F74865E80781D202DFB3ECFF7FCBC3B190FE82A204ED0E350FC0F6F2613B2F2BCA6DF5A473A57A4A00D985EBAD880D6F23864A07B01

# ---------------------------------------------------------------------------
section "refusals: one line, exit 2"
K16=5ACB1D644C0D51204EA5F1451010D852
expect_usage encrypt -a kasumi-f99 -k "$K16" -i FA556B261C000000
check "an unknown name says so" grep -q "unknown algorithm 'kasumi-f99'" "$err"
check "  ... and lists the 3GPP ciphers among the known" \
	sh -c "grep -q 'kasumi-f8' '$err' && grep -q 'snow3g-uea2' '$err' && grep -q 'zuc-eea3' '$err'"
expect_usage encrypt -a kasumi-f8 -k "$K16"
check "no IV: says one is required" grep -q 'an IV is required' "$err"
# KASUMI's IV is 8 bytes, from the daemon's capability rows.
expect_usage encrypt -a kasumi-f8 -k "$K16" -i FA556B261C000000FA556B261C000000
check "a 16-byte IV for kasumi-f8: the sizes it takes" \
	grep -q 'kasumi-f8 takes IVs of 8 bytes, got 16' "$err"
expect_usage encrypt -a zuc-eea3 -k "${K16}00" -i 00056823C400000000056823C4000000
check "a 17-byte key for zuc-eea3: the sizes it takes" \
	grep -q 'zuc-eea3 takes keys of 16 bytes, got 17' "$err"
expect_usage encrypt -a snow3g-uea2 -k "$K16" -i FA556B261C000000FA556B261C000000 --aad 00
check "AAD for a cipher: refused" grep -q 'takes no --aad' "$err"
expect_usage encrypt -a snow3g-uea2 --sessionless -k "$K16" -i FA556B261C000000FA556B261C000000
check "--sessionless for a bit-length cipher: refused" grep -q 'counts bits' "$err"
# KASUMI f8 runs 1..20000 bits: 2501 bytes are more.
head -c 2501 /dev/zero >"$tmp/big"
ctl encrypt -a kasumi-f8 -k "$K16" -i FA556B261C000000 --in "$tmp/big"
check "2501 bytes for kasumi-f8: exit 2, its limit in bits" \
	sh -c "test $rc -eq 2 && grep -q 'more than 20000 bits' '$err'"

finish test_cryptoctl_3gpp
