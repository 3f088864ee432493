#!/usr/bin/env bash
# openssl enc / dgst / mac with cryptod's provider give byte-identical
# output to the default provider alone, on files of 0 B, 1 B, odd sizes
# and ~100 MiB, and the work reached the daemon (its engine byte
# counters grew).
#   test_prov_cli.sh CRYPTOD_BIN PROVIDER_DIR CRYPTOCTL [SANITIZE]
set -uo pipefail
daemon=$1 provdir=$2 ctl=$3 sanitize=${4:-}
. "$(dirname "$0")/prov_lib.sh"
prov_need_unsanitized "$sanitize"
prov_need openssl
prov_tmp cli
export CRYPTOD_SOCKET=$tmp/cryptod.sock
prov_daemon_start "$CRYPTOD_SOCKET"

# Both providers loaded, cryptod's implementations asked for by property.
P=(-provider-path "$provdir" -provider cryptod -provider default
	-propquery provider=cryptod)

sizes=(0 1 15 16 17 4095 8193 65537 1000003)
for n in "${sizes[@]}"; do
	head -c "$n" /dev/urandom >"$tmp/in.$n"
done
head -c $((100 << 20)) /dev/urandom >"$tmp/in.big"
files=("${sizes[@]/#/in.}" in.big)

K16=000102030405060708090a0b0c0d0e0f
K32=${K16}101112131415161718191a1b1c1d1e1f
IV=f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff
before=$(daemon_bytes)

for f in "${files[@]}"; do
	for c in aes-128-ctr aes-256-ctr aes-128-cbc aes-192-cbc aes-256-cbc \
		aes-128-ecb aes-256-ecb; do
		case $c in
		*-128-*) k=$K16 ;; *-192-*) k=${K32:0:48} ;; *) k=$K32 ;;
		esac
		iv=(-iv "$IV")
		[[ $c == *ecb ]] && iv=()
		openssl enc -"$c" -K "$k" "${iv[@]}" -in "$tmp/$f" \
			-out "$tmp/ref" 2>"$tmp/err" || { cat "$tmp/err"; bad "$c $f: reference"; continue; }
		openssl enc -"$c" -K "$k" "${iv[@]}" -in "$tmp/$f" \
			-out "$tmp/got" "${P[@]}" 2>"$tmp/err" || { cat "$tmp/err"; bad "$c $f: encrypt"; continue; }
		cmp -s "$tmp/ref" "$tmp/got" || bad "$c $f: ciphertext differs"
		openssl enc -d -"$c" -K "$k" "${iv[@]}" -in "$tmp/ref" \
			-out "$tmp/dec" "${P[@]}" 2>"$tmp/err" || { cat "$tmp/err"; bad "$c $f: decrypt"; continue; }
		cmp -s "$tmp/$f" "$tmp/dec" || bad "$c $f: plaintext differs"
	done
	for d in sha1 sha224 sha256 sha384 sha512; do
		r=$(openssl dgst -"$d" -r "$tmp/$f" | cut -d' ' -f1)
		g=$(openssl dgst -"$d" -r "${P[@]}" "$tmp/$f" | cut -d' ' -f1)
		[ -n "$r" ] && [ "$r" = "$g" ] || bad "dgst $d $f: $g, want $r"
	done
	for d in SHA1 SHA256 SHA512; do
		r=$(openssl mac -digest "$d" -macopt hexkey:$K32 -in "$tmp/$f" HMAC)
		g=$(openssl mac -digest "$d" -macopt hexkey:$K32 -in "$tmp/$f" "${P[@]}" HMAC)
		[ -n "$r" ] && [ "$r" = "$g" ] || bad "HMAC-$d $f: $g, want $r"
	done
	r=$(openssl mac -cipher AES-128-CBC -macopt hexkey:$K16 -in "$tmp/$f" CMAC)
	g=$(openssl mac -cipher AES-128-CBC -macopt hexkey:$K16 -in "$tmp/$f" "${P[@]}" CMAC)
	[ -n "$r" ] && [ "$r" = "$g" ] || bad "CMAC $f: $g, want $r"
done

after=$(daemon_bytes)
# The ~100 MiB file alone went through 7 ciphers twice (1400 MiB), 5
# digests and 4 MACs (900 MiB).
if [ $((after - before)) -lt $((20 * (100 << 20))) ]; then
	bad "the daemon's engines counted $((after - before)) bytes"
fi

# 100 MiB through aes-128-ctr, with and without the provider (not a
# gate: a figure for docs/provider.md).
t0=$(date +%s.%N)
openssl enc -aes-128-ctr -K $K16 -iv $IV -in "$tmp/in.big" -out /dev/null
t1=$(date +%s.%N)
openssl enc -aes-128-ctr -K $K16 -iv $IV -in "$tmp/in.big" -out /dev/null "${P[@]}"
t2=$(date +%s.%N)
python3 -c "import sys; a, b, c = map(float, sys.argv[1:]); \
print('openssl enc aes-128-ctr 100 MiB: default %.0f MiB/s, cryptod %.0f MiB/s' % (100 / (b - a), 100 / (c - b)))" \
	"$t0" "$t1" "$t2"

prov_end
