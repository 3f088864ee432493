#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cryptoctl cross-checked with independent implementations (OpenSSL for
# GCM, python's cryptography for every algorithm, on every engine), and
# keys that must not stay in argv.
#
#   test_cryptoctl_xcheck.sh CRYPTOD CRYPTOCTL [GCM_REF [HOLD_QUEUE]]   (cryptoctl_lib.sh)
#
# XCHECK_GCM_CASES (default 40): random AES-GCM cases against OpenSSL;
# XCHECK_PER_ALG (cryptoctl_lib.sh): random cases per algorithm.
set -u
. "$(dirname "$0")/cryptoctl_lib.sh"
engines_txt

# ---------------------------------------------------------------------------
section "cross-check with independent AES-GCM implementations"
tag_lens=(4 8 12 13 14 15 16)
key_lens=(16 24 32)
if [ -x "$REF" ]; then
	n=0 nbad=0
	for i in $(seq "${XCHECK_GCM_CASES:-40}"); do
		kl=${key_lens[RANDOM % 3]}
		tl=${tag_lens[RANDOM % 7]}
		len=$(((RANDOM * 32768 + RANDOM) % 20000))
		[ $((i % 10)) -eq 0 ] && len=0
		key=$(randhex "$kl")
		# a third of them 1..128 bytes: past 16, in the arena
		iv=$(randhex $((i % 3 ? 12 : 1 + RANDOM % 128)))
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

	# IVs of 1..128 bytes on every engine whose row lists them, and
	# session-less (the IV in the op's arena then); GMAC too.
	iv_engines() # ALG LEN: the available engines that take LEN-byte IVs
	{
		python3 - "$tmp/engines.json" "$1" "$2" <<'EOF'
import json, sys
alg, n = sys.argv[2], int(sys.argv[3])
for r in json.load(open(sys.argv[1]))["algorithms"]:
    if r["alg"] == alg and r["available"] and any(
            x["min"] <= n <= x["max"] and (n == x["min"] or
            (x["increment"] and (n - x["min"]) % x["increment"] == 0))
            for x in r["iv_sizes"]):
        print(r["engine"])
EOF
	}
	n=0 nbad=0
	for ivl in 1 8 17 64 128; do
		key=$(randhex 16) iv=$(randhex "$ivl") aad=$(randhex 20)
		head -c 1000 /dev/urandom >"$tmp/pt"
		"$REF" enc "$key" "$iv" "$aad" 16 <"$tmp/pt" >"$tmp/refct"
		"$REF" enc "$key" "$iv" "$(bin2hex <"$tmp/pt")" 16 </dev/null \
			>"$tmp/refmac"
		for how in default sessionless $(iv_engines aes-gcm "$ivl"); do
			how_opts "$how"
			n=$((n + 3))
			"$CTL" encrypt -k "$key" -i "$iv" --aad "$aad" \
				"${extra[@]}" <"$tmp/pt" >"$tmp/ct" 2>"$err" &&
				cmp -s "$tmp/ct" "$tmp/refct" ||
				{ nbad=$((nbad + 1)); echo "  $ivl-byte IV ($how) encrypt: $(cat "$err")" >&2; }
			"$CTL" decrypt -k "$key" -i "$iv" --aad "$aad" \
				"${extra[@]}" <"$tmp/refct" 2>"$err" |
				cmp -s - "$tmp/pt" ||
				{ nbad=$((nbad + 1)); echo "  $ivl-byte IV ($how) decrypt: $(cat "$err")" >&2; }
			"$CTL" encrypt -a aes-gmac -k "$key" -i "$iv" \
				"${extra[@]}" <"$tmp/pt" 2>"$err" |
				cmp -s - "$tmp/refmac" ||
				{ nbad=$((nbad + 1)); echo "  $ivl-byte IV ($how) gmac: $(cat "$err")" >&2; }
		done
	done
	check "IVs of 1..128 bytes, every engine and session-less: OpenSSL agrees ($n runs, $nbad bad)" \
		test "$n" -gt 0 -a "$nbad" -eq 0
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
		# every other one 8..128 bytes (what AESGCM takes)
		iv=$(randhex $((i % 2 ? 12 : 8 + RANDOM % 121)))
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
          "aes-cbc-hmac-sha256", "aes-cbc-hmac-sha384", "aes-cbc-hmac-sha512")
# authenc: the HMAC's hash and the ICV bytes, by the name's last part
ICVS = {"sha1": (hashlib.sha1, 12), "sha256": (hashlib.sha256, 16),
        "sha384": (hashlib.sha384, 24), "sha512": (hashlib.sha512, 32)}

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
    elif alg.startswith(("aes-cbc-hmac-", "aes-ctr-hmac-")):
        h, icv = ICVS[alg.rsplit("-", 1)[1]]
        aad = os.urandom(random.randrange(0, 100))
        # keys.min_bits (128 by default) holds an authenc HMAC key too
        akey = os.urandom(random.randrange(16, 65))
        mode = modes.CTR(iv) if alg.startswith("aes-ctr") else modes.CBC(iv)
        ct = aes(mode, key, pt)
        out = ct + hmac.new(akey, aad + ct, h).digest()[:icv]
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

finish test_cryptoctl_xcheck
