#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl round trips: every algorithm on every engine, with and without
# a session; input-length rules (exit 2); the 16 MiB limit of the algorithms
# that do not stream; authentication failures (exit 3, nothing on stdout).
# ROUNDTRIP_LENS: the lengths of the every-algorithm round trips (default
# 0 17 4097 65536 1048577).
#
#   test_cryptoctl_roundtrip.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]   (cryptoctl_lib.sh)
set -u
. "$(dirname "$0")/cryptoctl_lib.sh"
engines_txt

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
for alg in $ALGS_RUN; do
	alg_args "$alg"
	hows="default sessionless $(engines_of "$alg")"
	n=0 nbad=0
	# 65536: one past ipsec-mb's 16-bit multi-buffer lengths.
	for len in ${ROUNDTRIP_LENS:-0 17 4097 65536 1048577}; do
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
section "size limit (16 MiB) of the algorithms that do not stream"
# aes-gcm and the others that stream take any length (test_cryptoctl_stream.sh);
# chacha20 is one operation, as are --sessionless and aes-xts without
# --data-unit.
head -c $((16 << 20)) /dev/urandom >"$tmp/big"
key=$(randhex 32)
iv=$(randhex 16)
"$CTL" encrypt -a chacha20 -k "$key" -i "$iv" <"$tmp/big" >"$tmp/bigct" 2>"$err"
check "encrypt 16 MiB: exit 0 ($(cat "$err"))" test $? -eq 0
"$CTL" decrypt -a chacha20 -k "$key" -i "$iv" <"$tmp/bigct" >"$tmp/bigrt" 2>"$err"
check "decrypt 16 MiB: exit 0 ($(cat "$err"))" test $? -eq 0
check "16 MiB round trip" cmp -s "$tmp/big" "$tmp/bigrt"
echo x >>"$tmp/big"
"$CTL" encrypt -a chacha20 -k "$key" -i "$iv" <"$tmp/big" >"$out" 2>"$err"
check "encrypt 16 MiB + 2: exit 1" test $? -eq 1
check "encrypt 16 MiB + 2: nothing on stdout" test ! -s "$out"
check "encrypt 16 MiB + 2: says why" grep -q 'larger than 16 MiB.*does not stream' "$err"
"$CTL" encrypt --sessionless -k "$key" -i "${iv:0:24}" <"$tmp/big" >"$out" 2>"$err"
check "aes-gcm --sessionless, 16 MiB + 2: exit 1, says why" \
	test $? -eq 1 -a ! -s "$out" -a "$(grep -c 'larger than 16 MiB.*--sessionless' "$err")" -eq 1
rm -f "$tmp/big" "$tmp/bigct" "$tmp/bigrt"

# ---------------------------------------------------------------------------
section "authentication failures: exit 3, nothing on stdout"
key=$(randhex 16)
iv=$(randhex 12)
aad=$(randhex 20)
head -c 3000 /dev/urandom >"$tmp/pt"
"$CTL" encrypt -k "$key" -i "$iv" --aad "$aad" <"$tmp/pt" >"$tmp/ct"
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
check "input shorter than the tag: exit 2 (an input length)" test $? -eq 2 -a ! -s "$out"

# The encrypt-then-MAC family: the tag covers AAD and ciphertext.
section "authentication failures: authenc and GMAC"
key=$(randhex 32)
iv=$(randhex 16)
# HMAC pads its key with zeros: with a last byte of 0, the key one byte
# short below would be the same key (and verify, 1 run in 256).
akey=$(randhex 19)a5
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

finish test_cryptoctl_roundtrip
