#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl against published vectors: NIST GCM, RFC 3602 CBC, the CAVP
# CBC/ECB/CTR/XTS files, GMAC and the RFC 2202/4231 HMAC known answers.
#
#   test_cryptoctl_vectors.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]   (cryptoctl_lib.sh)
set -u
# The RFCs' HMAC keys include 4-byte "Jefe", below the key policy's
# default (128 bits), which authenc's auth_key is held to as an HMAC
# key is.
daemon_setup()
{
	DAEMON_ARGS="--set keys.min_bits=0"
}
. "$(dirname "$0")/cryptoctl_lib.sh"

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

# NIST CAVP (gcmEncryptExtIV*.rsp, gcmDecrypt*.rsp): 96-bit IVs, and
# the 8- and 1024-bit ones of the sections with 128-bit AAD and tags
# (1024 bits: 128 bytes, which travel in the arena).
# nist_vectors FILE: "key iv pt aad ct tag" per vector, '-' for empty,
# pt 'FAIL' for a vector whose tag must not verify.
nist_vectors()
{
	awk -v per="$NIST_PER_SECTION" '
	function f(v) { return v == "" ? "-" : v }
	{ sub(/\r$/, "") }
	/^\[IVlen = / { ivlen = $3 + 0 }
	/^\[AADlen = / { aadlen = $3 + 0 }
	/^\[Taglen = / { taglen = $3 + 0 }
	/^Count = / { count = $3 + 0; pt = ""; failed = 0 }
	/^Key = / { key = $3 }
	/^IV = / { iv = $3 }
	/^PT = / { pt = $3 }
	/^AAD = / { aad = $3 }
	/^CT = / { ct = $3 }
	/^Tag = / { tag = $3 }
	/^FAIL/ { failed = 1 }
	function want() {
		return count < per &&
			(ivlen == 96 || (aadlen == 128 && taglen == 128))
	}
	/^$/ && key != "" {
		if (want())
			print key, iv, (failed ? "FAIL" : f(pt)), f(aad), f(ct), tag
		key = ""
	}
	END { if (key != "" && want())
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

	# GCM hashes an IV of another length into J0; the aesni and openssl
	# engines take 1..128 bytes (the NIST loop above runs them on the
	# default engine). The first 8-bit-IV vector with data of each file.
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

# RFC 3610 packet vector 1 (AES-CCM, nonce 13, AAD 8, tag 8), RFC 8439
# 2.8.2 (ChaCha20-Poly1305) and A.2 test vector 3 (ChaCha20, counter 42).
kat "RFC 3610 packet vector 1" aes-ccm c0c1c2c3c4c5c6c7c8c9cacbcccdcecf \
	00000003020100a0a1a2a3a4a5 \
	08090a0b0c0d0e0f101112131415161718191a1b1c1d1e \
	588c979a61c663d2f066d0c2c0f989806d5f6b61dac38417e8d12cfdf926e0 \
	--aad 0001020304050607 --tag-len 8
kat "RFC 8439 2.8.2" chacha20-poly1305 \
	808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f \
	070000004041424344454647 \
	"$(printf '%s' "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it." | bin2hex)" \
	d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b61161ae10b594f09e26a7e902ecbd0600691 \
	--aad 50515253c0c1c2c3c4c5c6c7
kat "RFC 8439 A.2 vector 3" chacha20 \
	1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0 \
	2a000000000000000000000000000002 \
	2754776173206272696c6c69672c20616e642074686520736c6974687920746f7665730a446964206779726520616e642067696d626c6520696e2074686520776162653a0a416c6c206d696d737920776572652074686520626f726f676f7665732c0a416e6420746865206d6f6d65207261746873206f757467726162652e \
	62e6347f95ed87a45ffae7426f27a1df5fb69110044c0d73118effa95b01e5cf166d3df2d721caf9b21e5fb14c616871fd84c54f9d65b283196c7fe4f60553ebf39c6402c42234e32a356b3e764312a61a5532055716ead6962568f87d3f3f7704c6a8d1bcd1bf4d50d6154b6da731b187b58dfd728afa36757a797ac188d1

finish test_cryptoctl_vectors
