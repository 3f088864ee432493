#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl streams: encrypt, decrypt, digest and mac on input of any
# length, read 1 MiB at a time. Byte for byte against openssl enc (CTR,
# CBC, ECB), python's cryptography (GCM, ChaCha20-Poly1305, CCM, XTS with
# --data-unit), sha*sum and openssl's HMAC and CMAC; sizes around the
# 1 MiB chunk; --in and --out (atomic, never half written, never
# unverified); a tampered GCM message (exit 3, nothing released);
# --release-unverified; bad arguments; and 1 GiB through a pipe in
# constant memory, timed against openssl enc.
#
#   test_cryptoctl_stream.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]   (cryptoctl_lib.sh)
#
# BIG_MIB (default 1024) sets the size of the pipe run; RSS_MAX_KB (default
# 65536) its peak RSS bound; STREAM_SIZES, STREAM_SOME and XTS_LENS the
# lengths (the sanitized builds' are around the chunk only: no 3 MiB, fewer
# near 1 MiB).
set -u
. "$(dirname "$0")/cryptoctl_lib.sh"
# Each section says when it started: the whole must stay well under a minute.
section() { echo "== [${SECONDS}s] $*"; }
BIG_MIB=${BIG_MIB:-1024}
RSS_MAX_KB=${RSS_MAX_KB:-65536}
# The spool files of decrypt and CCM stay in the test's directory.
export TMPDIR=$tmp
have_openssl=0
command -v openssl >/dev/null && have_openssl=1
have_py=0
python3 -c 'import cryptography.hazmat.primitives.ciphers.aead' 2>/dev/null &&
	have_py=1
GNU_TIME=
/usr/bin/time -f %M true >/dev/null 2>&1 && GNU_TIME=/usr/bin/time

# Sizes around the chunk (1 MiB) and the tag held back at its end.
SIZES=${STREAM_SIZES:-"0 1 15 16 17 4095 1048560 1048575 1048576 1048577 1048592 3145745"}
# Fewer for the variants (key sizes, CCM and ChaCha20).
SOME=${STREAM_SOME:-"0 1 17 1048575 1048577 3145745"}
# blocks_of SIZE: SIZE rounded down to whole AES blocks
blocks_of() { echo $(($1 - $1 % 16)); }
mkdata() { head -c "$1" /dev/urandom >"$tmp/pt.$1"; }
for len in $SIZES; do mkdata "$len"; done
for len in $SIZES; do
	b=$(blocks_of "$len")
	[ -e "$tmp/pt.$b" ] || mkdata "$b"
done
# The lengths the checks below name whatever the lists.
for len in 1 16 17 4095 4113 1048577 3145745; do
	[ -e "$tmp/pt.$len" ] || mkdata "$len"
done

# ---------------------------------------------------------------------------
section "help"
for cmd in digest mac; do
	ctl "$cmd" --help
	check "$cmd --help" test "$rc" -eq 0 -a ! -s "$err" \
		-a "$(head -n 1 "$out" | cut -d' ' -f1-3)" = "Usage: cryptoctl $cmd"
	cp "$out" "$tmp/help1"
	ctl help "$cmd"
	check "help $cmd = $cmd --help" cmp -s "$out" "$tmp/help1"
done
ctl --help
check "main help lists digest and mac" \
	test "$(grep -Ec '^  (digest|mac) ' "$out")" -eq 2
ctl encrypt --help
for opt in --in --out --data-unit 'stream'; do
	check "encrypt --help mentions $opt" grep -qF -- "$opt" "$out"
done
ctl decrypt --help
check "decrypt --help: --release-unverified and its risk" \
	grep -A6 -- '--release-unverified' "$out" | grep -q 'forged'

# ---------------------------------------------------------------------------
# enc_cmp NAME CTL_ARGS -- OPENSSL_ARGS: for every size (whole blocks for
# CBC and ECB), cryptoctl encrypt through a pipe and with --in/--out,
# and decrypt, against openssl enc; one check per algorithm.
enc_cmp()
{
	local name=$1 blocks=$2 sizes=$3 len n=0 nbad=0 ct
	shift 3
	local -a c=() o=()
	while [ "$1" != -- ]; do c+=("$1"); shift; done
	shift
	o=("$@")
	for len in $sizes; do
		[ "$blocks" = 1 ] && len=$(blocks_of "$len")
		local pt=$tmp/pt.$len
		openssl enc "${o[@]}" -in "$pt" -out "$tmp/ref" || nbad=$((nbad + 1))
		cat "$pt" | "$CTL" encrypt "${c[@]}" >"$tmp/ct" 2>>"$tmp/enc.err"
		cmp -s "$tmp/ref" "$tmp/ct" || { nbad=$((nbad + 1)); echo "  $name: $len bytes from a pipe differ" >&2; }
		rm -f "$tmp/ct2"
		"$CTL" encrypt "${c[@]}" --in "$pt" --out "$tmp/ct2" 2>>"$tmp/enc.err"
		cmp -s "$tmp/ref" "$tmp/ct2" || { nbad=$((nbad + 1)); echo "  $name: $len bytes --in/--out differ" >&2; }
		cat "$tmp/ref" | "$CTL" decrypt "${c[@]}" | cmp -s - "$pt" ||
			{ nbad=$((nbad + 1)); echo "  $name: $len bytes: decrypt differs" >&2; }
		n=$((n + 3))
	done
	check "$name: $n runs, $(wc -w <<<"$sizes") sizes, 0..3 MiB, byte-identical with openssl enc ($nbad bad)" \
		test "$nbad" -eq 0
}

section "encrypt and decrypt vs openssl enc"
if [ "$have_openssl" = 1 ]; then
	for bits in 128 192 256; do
		key=$(randhex $((bits / 8)))
		iv=$(randhex 16)
		sizes=$SOME
		[ "$bits" = 128 ] && sizes=$SIZES
		enc_cmp "aes-$bits-ctr" 0 "$sizes" -a "aes-$bits-ctr" -k "$key" \
			-i "$iv" -- "-aes-$bits-ctr" -K "$key" -iv "$iv"
		sizes=$SOME
		[ "$bits" = 256 ] && sizes=$SIZES
		enc_cmp "aes-$bits-cbc" 1 "$sizes" -a aes-cbc -k "$key" -i "$iv" -- \
			"-aes-$bits-cbc" -nopad -K "$key" -iv "$iv"
		sizes=$SOME
		[ "$bits" = 192 ] && sizes=$SIZES
		enc_cmp "aes-$bits-ecb" 1 "$sizes" -a "aes-$bits-ecb" -k "$key" -- \
			"-aes-$bits-ecb" -nopad -K "$key"
	done
	[ -s "$tmp/enc.err" ] && head -n 5 "$tmp/enc.err" >&2
else
	echo "  skipped: no openssl"
fi

# ---------------------------------------------------------------------------
section "AEADs and XTS vs python cryptography, and vs one operation"
# Each case: cryptoctl's output in $tmp/case.N, its parameters in
# $tmp/cases; one python run checks them all.
ncase=0
: >"$tmp/cases"
add_case() # ALG KEY IV AAD TAG_LEN_OR_UNIT PT
{
	ncase=$((ncase + 1))
	echo "$1 $2 $3 ${4:--} $5 $6 $tmp/case.$ncase" >>"$tmp/cases"
}
n=0 nbad=0
for alg in aes-gcm chacha20-poly1305 aes-ccm; do
	sizes=$SOME
	[ "$alg" = aes-gcm ] && sizes=$SIZES
	for len in $sizes; do
		pt=$tmp/pt.$len
		case $alg in
		# GCM: every other IV 8..128 bytes (the stream's FIRST piece
		# and the session-less op carry it in the arena past 16)
		aes-gcm) key=$(randhex 32) tl=16
			iv=$(randhex $((len % 2 ? 12 : 8 + len % 121))) ;;
		chacha20-poly1305) key=$(randhex 32) iv=$(randhex 12) tl=16 ;;
		aes-ccm) key=$(randhex 16) iv=$(randhex 12) tl=$((4 + 2 * (len % 7))) ;;
		esac
		aad=$(randhex $((len % 50)))
		a=(-a "$alg" -k "$key" -i "$iv" --aad "$aad" --tag-len "$tl")
		# From a pipe (CCM: spooled for its length).
		cat "$pt" | "$CTL" encrypt "${a[@]}" >"$tmp/case.$((ncase + 1))" 2>"$err" ||
			{ nbad=$((nbad + 1)); echo "  $alg $len: $(cat "$err")" >&2; }
		add_case "$alg" "$key" "$iv" "$aad" "$tl" "$pt"
		ct=$tmp/case.$ncase
		# One operation (session-less) gives the same bytes.
		"$CTL" encrypt "${a[@]}" --sessionless --in "$pt" >"$tmp/one" 2>"$err"
		cmp -s "$ct" "$tmp/one" ||
			{ nbad=$((nbad + 1)); echo "  $alg $len: stream and one op differ: $(cat "$err")" >&2; }
		# Decrypt from a pipe, to stdout (spooled) and to --out.
		cat "$ct" | "$CTL" decrypt "${a[@]}" | cmp -s - "$pt" ||
			{ nbad=$((nbad + 1)); echo "  $alg $len: decrypt to stdout" >&2; }
		rm -f "$tmp/rt"
		cat "$ct" | "$CTL" decrypt "${a[@]}" --out "$tmp/rt" && cmp -s "$tmp/rt" "$pt" ||
			{ nbad=$((nbad + 1)); echo "  $alg $len: decrypt --out" >&2; }
		# The tag given apart.
		head -c "$len" "$ct" | "$CTL" decrypt "${a[@]}" \
			-t "$(tail -c "$tl" "$ct" | bin2hex)" | cmp -s - "$pt" ||
			{ nbad=$((nbad + 1)); echo "  $alg $len: decrypt -t" >&2; }
		n=$((n + 5))
	done
done
check "aes-gcm, chacha20-poly1305, aes-ccm: $n runs, 0..3 MiB, round trips, stream = one op ($nbad bad)" \
	test "$nbad" -eq 0

# XTS in data units: unit k's tweak is the IV plus k (little-endian).
n=0 nbad=0
for du in 16 512 4096 1048576; do
	for len in ${XTS_LENS:-16 17 4113 1048576 1048593 3145745}; do
		last=$((len % du))
		[ "$last" -gt 0 ] && [ "$last" -lt 16 ] && continue
		[ -e "$tmp/pt.$len" ] || mkdata "$len"
		key=$(randhex 64)
		# An IV near 2^64: the carry into the upper half counts.
		iv=fdffffffffffffff$(randhex 8)
		cat "$tmp/pt.$len" | "$CTL" encrypt -a aes-xts -k "$key" -i "$iv" \
			--data-unit "$du" >"$tmp/case.$((ncase + 1))" 2>"$err" ||
			{ nbad=$((nbad + 1)); echo "  xts $du $len: $(cat "$err")" >&2; }
		add_case aes-xts "$key" "$iv" - "$du" "$tmp/pt.$len"
		"$CTL" decrypt -a aes-xts -k "$key" -i "$iv" --data-unit "$du" \
			--in "$tmp/case.$ncase" | cmp -s - "$tmp/pt.$len" ||
			{ nbad=$((nbad + 1)); echo "  xts $du $len: decrypt" >&2; }
		n=$((n + 2))
	done
done
check "aes-xts --data-unit 16..1 MiB: $n runs round trip ($nbad bad)" test "$nbad" -eq 0

if [ "$have_py" = 1 ]; then
	python3 - "$tmp/cases" <<'EOF'
import sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import (AESCCM, AESGCM,
                                                         ChaCha20Poly1305)
bad = 0
for line in open(sys.argv[1]):
    alg, key, iv, aad, p, pt, got = line.split()
    key, iv, p = bytes.fromhex(key), bytes.fromhex(iv), int(p)
    aad = None if aad == "-" else bytes.fromhex(aad) or None
    pt = open(pt, "rb").read()
    if alg == "aes-gcm":
        want = AESGCM(key).encrypt(iv, pt, aad)[:len(pt) + p]
    elif alg == "chacha20-poly1305":
        want = ChaCha20Poly1305(key).encrypt(iv, pt, aad)
    elif alg == "aes-ccm":
        want = AESCCM(key, tag_length=p).encrypt(iv, pt, aad)
    else:  # aes-xts, data unit p
        t0, want = int.from_bytes(iv, "little"), b""
        for k, off in enumerate(range(0, len(pt), p)):
            tw = ((t0 + k) % (1 << 128)).to_bytes(16, "little")
            e = Cipher(algorithms.AES(key), modes.XTS(tw)).encryptor()
            want += e.update(pt[off:off + p]) + e.finalize()
    if open(got, "rb").read() != want:
        bad += 1
        print("  python disagrees:", alg, len(pt), "bytes, param", p,
              file=sys.stderr)
sys.exit(bad != 0)
EOF
	check "python cryptography agrees on $ncase streamed encryptions" test $? -eq 0
else
	echo "  skipped python cryptography: not importable"
fi
# Without --data-unit the message is one data unit, as before streams.
"$CTL" encrypt -a aes-xts -k "$K32$K16$K16" -i "$IV16" --in "$tmp/pt.4113" >"$tmp/ct"
"$CTL" encrypt -a aes-xts -k "$K32$K16$K16" -i "$IV16" --in "$tmp/pt.4113" \
	--data-unit 4113 >"$tmp/ct2"
check "aes-xts without --data-unit: the message is one unit" cmp -s "$tmp/ct" "$tmp/ct2"

# The openssl engine streams GCM too (its own GHASH): by name, past
# 16 MiB, the same bytes as the default engine's stream.
if grep -q '^aes-gcm openssl$' "$tmp/engines.txt" 2>/dev/null ||
	{ engines_txt && grep -q '^aes-gcm openssl$' "$tmp/engines.txt"; }; then
	a=(-k "$K16" -i "$IV12" --aad 0102)
	head -c $((17 << 20)) /dev/zero | "$CTL" encrypt "${a[@]}" >"$tmp/ct"
	head -c $((17 << 20)) /dev/zero | "$CTL" encrypt "${a[@]}" --engine openssl \
		>"$tmp/ct2" 2>"$err"
	check "--engine openssl, 17 MiB of GCM: streamed, the same bytes" \
		cmp -s "$tmp/ct" "$tmp/ct2"
	cat "$tmp/ct2" | "$CTL" decrypt "${a[@]}" --engine openssl |
		cmp -s - <(head -c $((17 << 20)) /dev/zero)
	check "--engine openssl: decrypts its own stream" test $? -eq 0
fi
# An algorithm no engine streams (RFC 4106 GCM): one operation, the same
# bytes from a pipe as from a file, up to 16 MiB; past that, refused.
a=(-a aes-gcm-rfc4106 -k "${K16}00010203" -i 0001020304050607 --aad 0102030405060708)
"$CTL" encrypt "${a[@]}" --in "$tmp/pt.3145745" >"$tmp/ct"
cat "$tmp/pt.3145745" | "$CTL" encrypt "${a[@]}" >"$tmp/ct2"
check "aes-gcm-rfc4106 (no streams): one operation, the same bytes piped" \
	cmp -s "$tmp/ct" "$tmp/ct2"
head -c $((17 << 20)) /dev/zero | "$CTL" encrypt "${a[@]}" >"$out" 2>"$err"
rc=$?
check "aes-gcm-rfc4106, 17 MiB: exit 1, nothing out, says why" \
	test "$rc" -eq 1 -a ! -s "$out" -a "$(grep -c 'larger than 16 MiB.*does not stream' "$err")" -eq 1

# ---------------------------------------------------------------------------
section "digest vs sha*sum, mac vs openssl"
n=0 nbad=0
for len in 0 1 55 64 1048575 1048576 3145745; do
	[ -e "$tmp/pt.$len" ] || mkdata "$len"
	for h in sha1 sha224 sha256 sha384 sha512; do
		want=$("${h}sum" <"$tmp/pt.$len" | cut -d' ' -f1)
		got=$(cat "$tmp/pt.$len" | "$CTL" digest -a "$h")
		[ "$got" = "$want" ] || { nbad=$((nbad + 1)); echo "  $h $len: $got" >&2; }
		got=$("$CTL" digest -a "$h" --in "$tmp/pt.$len" --binary | bin2hex)
		[ "$got" = "$want" ] || { nbad=$((nbad + 1)); echo "  $h $len --binary: $got" >&2; }
		n=$((n + 2))
	done
done
check "digest: $n runs agree with sha*sum, hex and --binary ($nbad bad)" test "$nbad" -eq 0
"$CTL" digest --in "$tmp/pt.17" --verify "$(sha256sum <"$tmp/pt.17" | cut -c1-64)"
check "digest --verify: the right digest, exit 0" test $? -eq 0
"$CTL" digest --in "$tmp/pt.17" --verify "$(sha256sum <"$tmp/pt.17" | cut -c1-16)" --truncate 8
check "digest --verify --truncate 8: its first 8 bytes, exit 0" test $? -eq 0
ctl digest --in "$tmp/pt.17" --verify "$(sha256sum <"$tmp/pt.16" | cut -c1-64)"
check "digest --verify: another digest, exit 3, nothing on stdout" \
	test "$rc" -eq 3 -a ! -s "$out" -a -s "$err"
rm -f "$tmp/dg"
"$CTL" digest -a sha512 --in "$tmp/pt.1" --out "$tmp/dg"
check "digest --out: the hex line" test "$(cat "$tmp/dg")" = "$(sha512sum <"$tmp/pt.1" | cut -d' ' -f1)"

# --out through a symlink replaces its target (as open(2) would), not the
# link; a file it replaces keeps its mode.
printf 'old' >"$tmp/target"
chmod 0640 "$tmp/target"
ln -sf "$tmp/target" "$tmp/link"
"$CTL" digest -a sha256 --in "$tmp/pt.1" --out "$tmp/link"
check "--out through a symlink: the link stays, its target is replaced" \
	test -L "$tmp/link" -a "$(cat "$tmp/target")" = "$(sha256sum <"$tmp/pt.1" | cut -d' ' -f1)"
check "--out replacing a file keeps its mode" test "$(stat -c %a "$tmp/target")" = 640

if [ "$have_openssl" = 1 ]; then
	n=0 nbad=0
	for len in 0 1 64 1048577 3145745; do
		[ -e "$tmp/pt.$len" ] || mkdata "$len"
		pt=$tmp/pt.$len
		for h in sha1 sha224 sha256 sha384 sha512; do
			# At least keys.min_bits (128) of the daemon's policy.
			key=$(randhex $((16 + len % 200)))
			want=$(openssl dgst -"$h" -mac HMAC -macopt "hexkey:$key" <"$pt" | sed 's/.*= //')
			got=$(cat "$pt" | "$CTL" mac -a "hmac-$h" -k "$key")
			[ "$got" = "$want" ] || { nbad=$((nbad + 1)); echo "  hmac-$h $len: $got != $want" >&2; }
			n=$((n + 1))
		done
		for bits in 128 192 256; do
			key=$(randhex $((bits / 8)))
			want=$(openssl mac -cipher "AES-$bits-CBC" -macopt "hexkey:$key" -in "$pt" CMAC | tr A-F a-f)
			got=$("$CTL" mac -a aes-cmac -k "$key" --in "$pt")
			[ "$got" = "$want" ] || { nbad=$((nbad + 1)); echo "  aes-$bits-cmac $len: $got != $want" >&2; }
			n=$((n + 1))
		done
	done
	check "mac: $n HMAC-SHA-1/2 and AES-CMAC runs agree with openssl ($nbad bad)" test "$nbad" -eq 0
	# A 200-byte HMAC key, longer than a SHA-256 block, from a file.
	key=$(randhex 200)
	echo "$key" >"$tmp/mackey"
	want=$(openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key" <"$tmp/pt.17" | sed 's/.*= //')
	check "mac --key-file, a 200-byte key" \
		test "$("$CTL" mac --key-file "$tmp/mackey" --in "$tmp/pt.17")" = "$want"
	check "mac --tag-len 10: the first 10 bytes" test \
		"$("$CTL" mac --key-file "$tmp/mackey" --in "$tmp/pt.17" --tag-len 10)" = "${want:0:20}"
	"$CTL" mac --key-file "$tmp/mackey" --in "$tmp/pt.17" --verify "$want"
	check "mac --verify: the right MAC, exit 0" test $? -eq 0
	ctl mac --key-file "$tmp/mackey" --in "$tmp/pt.16" --verify "$want"
	check "mac --verify: other data, exit 3, nothing on stdout" \
		test "$rc" -eq 3 -a ! -s "$out" -a -s "$err"
else
	echo "  skipped: no openssl"
fi
# aes-xcbc-mac does not stream: one op, 16 MiB at most.
"$CTL" mac -a aes-xcbc-mac -k "$K16" --in "$tmp/pt.17" >"$out"
check "mac -a aes-xcbc-mac: a 12-byte MAC in hex" test "$(tr -d '\n' <"$out" | wc -c)" -eq 24

# ---------------------------------------------------------------------------
section "tampered GCM: exit 3, nothing released"
key=$(randhex 16)
iv=$(randhex 12)
g=(-k "$key" -i "$iv")
pt=$tmp/pt.3145745
"$CTL" encrypt "${g[@]}" --in "$pt" --out "$tmp/ct"
cp "$tmp/ct" "$tmp/bad"
# The first chunk: its plaintext was decrypted long before the tag.
flip_at "$tmp/bad" 1000
mkdir "$tmp/o"
expect_forged()
{
	local desc=$1
	shift
	"$@" >"$out" 2>"$err"
	rc=$?
	check "$desc: exit 3 (got $rc)" test "$rc" -eq 3
	check "$desc: stdout empty" test ! -s "$out"
	check "$desc: message" test "$(cat "$err")" = \
		"cryptoctl: authentication failed: tag mismatch"
}
expect_forged "pipe to stdout" sh -c "cat '$tmp/bad' | '$CTL' decrypt ${g[*]}"
expect_forged "--in to stdout" "$CTL" decrypt "${g[@]}" --in "$tmp/bad"
expect_forged "--out FILE, new" "$CTL" decrypt "${g[@]}" --in "$tmp/bad" --out "$tmp/o/new"
check "--out FILE, new: not created, no temporary file left" \
	test -z "$(ls -A "$tmp/o")"
echo "precious" >"$tmp/o/old"
expect_forged "--out FILE, existing" sh -c "cat '$tmp/bad' | '$CTL' decrypt ${g[*]} --out '$tmp/o/old'"
check "--out FILE, existing: not replaced, no temporary file left" \
	test "$(cat "$tmp/o/old")" = precious -a "$(ls -A "$tmp/o")" = old
check "no spool file left in \$TMPDIR" test -z "$(find "$tmp" -maxdepth 1 -name 'cryptoctl.*')"
old_mode=$(stat -c %a "$tmp/o/old")
"$CTL" decrypt "${g[@]}" --in "$tmp/ct" --out "$tmp/o/old"
check "--out FILE: replaced once the tag verified" cmp -s "$tmp/o/old" "$pt"
check "--out FILE: the mode of the file it replaced" \
	test "$(stat -c %a "$tmp/o/old")" = "$old_mode"
check "--out FILE: no temporary file left" test "$(ls -A "$tmp/o")" = old
# In place: --out the same file as --in.
cp "$pt" "$tmp/o/inplace"
"$CTL" encrypt "${g[@]}" --in "$tmp/o/inplace" --out "$tmp/o/inplace" &&
	"$CTL" decrypt "${g[@]}" --in "$tmp/o/inplace" --out "$tmp/o/inplace"
check "--in and --out the same file" cmp -s "$tmp/o/inplace" "$pt"

section "--release-unverified"
cat "$tmp/bad" | "$CTL" decrypt "${g[@]}" --release-unverified >"$out" 2>"$err"
rc=$?
check "forged: still exit 3 (got $rc)" test "$rc" -eq 3
check "forged: the unverified plaintext was released (>= 1 MiB of it)" \
	test "$(stat -c %s "$out")" -ge 1048576
cat "$tmp/ct" | "$CTL" decrypt "${g[@]}" --release-unverified | cmp -s - "$pt"
check "genuine: exit 0, the plaintext" test $? -eq 0

# ---------------------------------------------------------------------------
section "bad arguments and input"
expect_usage encrypt "${g[@]}" --in "$tmp/no-such-file"
expect_usage encrypt "${g[@]}" --in "$tmp"
expect_usage encrypt "${g[@]}" --out "$tmp/no-such-dir/x"
expect_usage encrypt "${g[@]}" --out "$tmp"
expect_usage encrypt "${g[@]}" --data-unit 4096
expect_usage encrypt -a aes-xts -k "$K32" -i "$IV16" --data-unit 8
expect_usage encrypt -a aes-xts -k "$K32" -i "$IV16" --data-unit x
expect_usage encrypt -a aes-xts -k "$K32" -i "$IV16" --data-unit 4096 --sessionless
expect_usage encrypt "${g[@]}" --release-unverified
expect_usage decrypt -a aes-ctr -k "$K16" -i "$IV16" --release-unverified
expect_usage decrypt -a aes-gmac -k "$K16" -i "$IV12" --out "$tmp/x"
expect_usage encrypt -a hmac-sha256 -k "$K16"
expect_usage encrypt -a sha256
expect_usage digest -a aes-gcm
expect_usage digest -a hmac-sha1
expect_usage digest -a md5
expect_usage digest --key "$K16"
expect_usage digest --verify zz
expect_usage digest --verify 00112233 --binary
expect_usage digest --verify 00112233 --out "$tmp/x"
expect_usage digest --verify 001122
expect_usage digest extra
expect_usage mac
expect_usage mac -a sha256 -k "$K16"
expect_usage mac -a aes-gmac -k "$K16"
expect_usage mac -a aes-cmac -k "$K16$K16$K16"
expect_usage mac -a aes-128-cmac -k "$K32"
expect_usage mac -k "$K16" --tag-len 3
expect_usage mac -k "$K16" --tag-len 33
expect_usage mac -a aes-cmac -k "$K16" --tag-len 17
expect_usage mac -k "$K16" --sessionless
expect_usage mac -k "$(randhex 257)"
expect_usage_from "$tmp/pt.17" encrypt -a aes-cbc -k "$K16" -i "$IV16"
expect_usage_from "$tmp/pt.4095" encrypt -a aes-xts -k "$K32" -i "$IV16" --data-unit 4088
expect_usage_from "$tmp/pt.1048577" encrypt -a aes-ecb -k "$K16"
# From a pipe, the length is known at the end: nothing out yet for an
# input of at most one chunk.
cat "$tmp/pt.17" | "$CTL" encrypt -a aes-cbc -k "$K16" -i "$IV16" >"$out" 2>"$err"
check "aes-cbc, 17 bytes from a pipe: exit 2, nothing on stdout" \
	test $? -eq 2 -a ! -s "$out" -a "$(lines "$err")" -eq 1
head -c 70000 /dev/zero | "$CTL" encrypt -a aes-ccm -k "$K16" -i "${IV16:0:26}" >"$out" 2>"$err"
rc=$?
check "aes-ccm, 13-byte nonce, 70000 bytes: exit 2 ($(cat "$err"))" test "$rc" -eq 2 -a ! -s "$out"
ctl encrypt "${g[@]}" <&-
check "stdin closed: exit 1, says so" test "$rc" -eq 1 -a ! -s "$out" &&
	check "stdin closed: message" grep -q 'stdin is closed' "$err"
"$CTL" encrypt "${g[@]}" --in "$tmp/pt.17" >&- 2>"$err"
check "stdout closed: exit 1, says so" test $? -eq 1 &&
	check "stdout closed: message" grep -q 'stdout is closed' "$err"
"$CTL" encrypt "${g[@]}" <&- --in "$tmp/pt.17" --out "$tmp/ct17"
check "stdin closed, --in: fine" test $? -eq 0 -a -s "$tmp/ct17"
ctl decrypt "${g[@]}" < <(head -c 9 "$tmp/ct")
check "decrypt, input shorter than the tag: exit 2 (an input length)" test "$rc" -eq 2 -a ! -s "$out"
"$CTL" digest --in "$tmp/pt.17" --verify "$(sha256sum <"$tmp/pt.17" | cut -c1-64)" >&-
check "digest --verify needs no stdout" test $? -eq 0

# ---------------------------------------------------------------------------
section "$BIG_MIB MiB through a pipe, constant memory"
# measure PIPELINE: run it in bash, GNU time (the $T in it) writing the
# peak RSS of one of its commands to $tmp/time.err; its status in $mrc,
# wall seconds in $wall, peak RSS (KiB) in $rss.
measure()
{
	local t0 t1
	t0=$(date +%s%N)
	bash -c "set -o pipefail; $1" 2>"$tmp/time.err"
	mrc=$?
	t1=$(date +%s%N)
	wall=$(((t1 - t0) / 10000000))
	wall=$((wall / 100)).$(printf '%02d' $((wall % 100)))
	rss=$(grep -E '^[0-9]+$' "$tmp/time.err" | tail -n 1)
	rss=${rss:-0}
	grep -Ev '^[0-9]+$' "$tmp/time.err" >&2
}
T=${GNU_TIME:+$GNU_TIME -f %M}
key=$(randhex 16)
iv=$(randhex 16)
bytes=$((BIG_MIB << 20))
big="head -c $bytes /dev/zero"
if [ "$have_openssl" = 1 ]; then
	measure "$big | $T openssl enc -aes-128-ctr -K $key -iv $iv | sha256sum >'$tmp/ref.sum'"
	echo "  openssl enc -aes-128-ctr, $BIG_MIB MiB: ${wall}s, peak RSS ${rss} KiB"
fi
measure "$big | $T '$CTL' encrypt -a aes-128-ctr -k $key -i $iv | sha256sum >'$tmp/ctl.sum'"
echo "  cryptoctl encrypt -a aes-128-ctr, $BIG_MIB MiB: ${wall}s, peak RSS ${rss} KiB"
check "aes-128-ctr, $BIG_MIB MiB from a pipe to a pipe: exit 0 (${wall}s)" \
	test "$mrc" -eq 0
[ "$have_openssl" = 1 ] &&
	check "aes-128-ctr, $BIG_MIB MiB: the same bytes as openssl enc" \
		cmp -s "$tmp/ref.sum" "$tmp/ctl.sum"
[ -n "$GNU_TIME" ] &&
	check "aes-128-ctr, $BIG_MIB MiB: peak RSS $rss KiB < $RSS_MAX_KB KiB" \
		test "$rss" -gt 0 -a "$rss" -lt "$RSS_MAX_KB"
# GCM both ways; decrypt spools the plaintext (in $TMPDIR) until the tag.
iv=${iv:0:24}
measure "$big | '$CTL' encrypt -k $key -i $iv |
	$T '$CTL' decrypt -k $key -i $iv | cmp - <($big)"
echo "  cryptoctl encrypt | decrypt, aes-gcm, $BIG_MIB MiB: ${wall}s, decrypt's peak RSS ${rss} KiB"
check "aes-gcm, $BIG_MIB MiB: encrypt | decrypt round trip (${wall}s)" test "$mrc" -eq 0
[ -n "$GNU_TIME" ] &&
	check "aes-gcm decrypt, $BIG_MIB MiB: peak RSS $rss KiB < $RSS_MAX_KB KiB" \
		test "$rss" -gt 0 -a "$rss" -lt "$RSS_MAX_KB"
check "no spool file left in \$TMPDIR" \
	test -z "$(find "$tmp" -maxdepth 1 -name 'cryptoctl.*')"

finish test_cryptoctl_stream
