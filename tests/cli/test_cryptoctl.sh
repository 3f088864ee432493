#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# End-to-end test of cryptoctl against a real cryptod on a temporary socket.
#
#   test_cryptoctl.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]
#
# GCM_REF is an OpenSSL AES-GCM with cryptoctl's conventions (gcm_ref.c);
# HOLD_QUEUE a client that keeps a queue open (hold_queue.c). Python's
# 'cryptography' package, when importable, is a second independent check.
# Exit 0 when every check passed, 1 otherwise.
set -u

DAEMON=$1
CTL=$2
REF=${3:-}
HOLD=${4:-}
VEC=/usr/lib/python3/dist-packages/cryptography_vectors/ciphers/AES/GCM
# How many vectors of each [Keylen/IVlen/PTlen/AADlen/Taglen] section to run.
NIST_PER_SECTION=${NIST_PER_SECTION:-1}

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
# that starts with "cryptoctl: ".
expect_usage()
{
	ctl "$@" </dev/null
	if [ "$rc" -eq 2 ] && [ ! -s "$out" ] && [ "$(lines "$err")" -eq 1 ] &&
		grep -q '^cryptoctl: ' "$err"; then
		ok
		echo "ok: exit 2: cryptoctl $*: $(cat "$err")"
	else
		bad "usage error expected for: $* (rc=$rc, stderr: $(cat "$err"))"
	fi
}

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
	grep -q '^Exit status' "$out"
check "main help lists commands and exit codes" test $? -eq 0
for cmd in stats encrypt decrypt ping version; do
	ctl "$cmd" --help
	check "$cmd --help" test "$rc" -eq 0 -a ! -s "$err" \
		-a "$(head -n 1 "$out" | cut -d' ' -f1-3)" = "Usage: cryptoctl $cmd"
	cp "$out" "$tmp/help1"
	ctl help "$cmd"
	check "help $cmd = $cmd --help" cmp -s "$out" "$tmp/help1"
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
unset CRYPTOD_SOCKET
ctl --socket "$sock" ping
check "--socket before the command" test "$rc" -eq 0
ctl ping --socket "$sock"
check "--socket after the command" test "$rc" -eq 0
export CRYPTOD_SOCKET=$sock

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
section "the key does not stay in argv"
key=$(randhex 16)
mkfifo "$tmp/fifo"
"$CTL" encrypt -k "$key" -i "$IV12" <"$tmp/fifo" >/dev/null 2>&1 &
cpid=$!
exec 9>"$tmp/fifo"
seen_exec=0 wiped=0
for _ in $(seq 100); do
	cmdline=$(tr '\0' ' ' <"/proc/$cpid/cmdline" 2>/dev/null)
	case $cmdline in
	"$CTL encrypt "*) seen_exec=1 ;;
	*) sleep 0.02; continue ;;
	esac
	case $cmdline in
	*"$key"*) sleep 0.02 ;;
	*) wiped=1; break ;;
	esac
done
exec 9>&-
wait "$cpid"
check "the key hex is wiped from /proc/PID/cmdline" \
	test "$seen_exec" -eq 1 -a "$wiped" -eq 1

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
