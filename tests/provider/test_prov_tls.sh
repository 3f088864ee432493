#!/usr/bin/env bash
# TLS with cryptod's provider doing the record crypto: openssl s_server
# and s_client, the provider loaded only through OPENSSL_CONF (the
# installed example, provider/cryptod-provider-tls.cnf), on a private
# daemon. For each suite, 100 MiB served by s_server -WWW to s_client:
# the negotiated protocol and suite are the ones asked for, the file
# arrives intact (SHA-256), the daemon's engines counted both ends'
# records (>= 2 x 100 MiB: the server seals, the client opens), and
# neither process fell back to the default provider. With the daemon
# unreachable, no connection is made and the error names cryptod.
#   test_prov_tls.sh CRYPTOD_BIN PROVIDER_DIR CRYPTOCTL SRC_DIR [SANITIZE]
set -uo pipefail
daemon=$1 provdir=$2 ctl=$3 src=$4 sanitize=${5:-}
. "$(dirname "$0")/prov_lib.sh"
prov_need_unsanitized "$sanitize"
prov_need openssl python3
spid=
prov_cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null; }
prov_tmp tls
cd "$tmp" || exit 1

# The daemon and the certificate without the provider: the daemon's own
# OpenSSL must never be pointed at cryptod.so (it would call itself).
unset OPENSSL_CONF OPENSSL_MODULES CRYPTOD_PROVIDER_ALGORITHMS
export CRYPTOD_SOCKET=$tmp/cryptod.sock
openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem \
	-days 1 -subj /CN=localhost 2>/dev/null || { echo "FAIL: certificate"; exit 1; }
prov_daemon_start "$CRYPTOD_SOCKET"

size=$((100 << 20))
head -c "$size" /dev/urandom >big.bin
want=$(sha256sum big.bin | cut -d' ' -f1)
head -c 1000 /dev/urandom >small.bin

# The body of an HTTP/1.0 response (s_server -WWW), its SHA-256.
body_sha() {
	python3 -c '
import hashlib, sys
d = open(sys.argv[1], "rb").read()
i = d.find(b"\r\n\r\n")
print(hashlib.sha256(d[i + 4:]).hexdigest() if d.startswith(b"HTTP/1.0 200") and i > 0 else "no-response")' "$1"
}

tls_env=(env OPENSSL_CONF="$src/provider/cryptod-provider-tls.cnf"
	OPENSSL_MODULES="$provdir" CRYPTOD_PROVIDER_STATS=1)

# GET /file through a fresh s_server (srv_opts: its options beyond the
# defaults); client options after the file. Leaves the client's stdout in
# got.bin, its stderr in cli.err, the server's output in srv.out.
srv_opts=()
fetch() { # file, client options...
	local file=$1
	shift
	rm -f srv.sock
	"${tls_env[@]}" timeout 60 openssl s_server -unix srv.sock -cert cert.pem \
		-key key.pem -WWW -http_server_binmode -naccept 1 "${srv_opts[@]}" \
		>srv.out 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		[ -S srv.sock ] && break
		sleep 0.05
	done
	printf 'GET /%s HTTP/1.0\r\n\r\n' "$file" |
		"${tls_env[@]}" timeout 60 openssl s_client -unix srv.sock \
			-brief -ign_eof "$@" >got.bin 2>cli.err
	local rc=$?
	wait "$spid"
	spid=
	return $rc
}

# name, protocol, suite, on_daemon (1: its records must reach the
# daemon), client options...
run() {
	local name=$1 proto=$2 suite=$3 on_daemon=$4
	shift 4
	local b0 b1 t0 t1
	b0=$(daemon_bytes)
	t0=$(date +%s.%N)
	fetch big.bin "$@" || bad "$name: s_client failed: $(grep -v verify cli.err | head -3)"
	t1=$(date +%s.%N)
	b1=$(daemon_bytes)
	grep -q "^Protocol version: $proto\$" cli.err || bad "$name: protocol $(grep 'Protocol version' cli.err), want $proto"
	grep -q "^Ciphersuite: $suite\$" cli.err || bad "$name: $(grep Ciphersuite cli.err), want $suite"
	[ "$(body_sha got.bin)" = "$want" ] || bad "$name: the file arrived different ($(stat -c %s got.bin) bytes)"
	local moved=$((b1 - b0))
	if [ "$on_daemon" = 1 ] && [ "$moved" -lt $((2 * size)) ]; then
		bad "$name: the daemon's engines counted $moved bytes, want >= $((2 * size))"
	fi
	for f in cli.err srv.out; do
		grep -q "cryptod provider: .* 0 fallbacks" "$f" ||
			bad "$name: $f: $(grep 'cryptod provider' "$f" || echo no provider counters)"
	done
	python3 -c "import sys; t = float(sys.argv[2]) - float(sys.argv[1]); \
print('%-50s %5.2f s  %4.0f MiB/s  daemon %4d MiB' % (sys.argv[3], t, 100 / t, int(sys.argv[4]) >> 20))" \
		"$t0" "$t1" "$name" "$moved"
}

# Which MAC mode a TLS 1.2 CBC connection negotiated: the server's
# encrypt_then_mac extension, in a short connection with -trace.
etm() { # client options...
	fetch small.bin -trace -msgfile trace.txt "$@" || return 2
	awk '/ServerHello,/,/Certificate, Length/' trace.txt |
		grep -q "extension_type=encrypt_then_mac"
}

run "TLS 1.3 TLS_AES_128_GCM_SHA256" TLSv1.3 TLS_AES_128_GCM_SHA256 1 \
	-tls1_3 -ciphersuites TLS_AES_128_GCM_SHA256
run "TLS 1.3 TLS_AES_256_GCM_SHA384" TLSv1.3 TLS_AES_256_GCM_SHA384 1 \
	-tls1_3 -ciphersuites TLS_AES_256_GCM_SHA384
run "TLS 1.3 TLS_CHACHA20_POLY1305_SHA256" TLSv1.3 TLS_CHACHA20_POLY1305_SHA256 1 \
	-tls1_3 -ciphersuites TLS_CHACHA20_POLY1305_SHA256
run "TLS 1.2 ECDHE-RSA-AES128-GCM-SHA256" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 1 \
	-tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256
# CCM: TLS 1.3's suites are plain EVP calls; TLS 1.2's are records
# (tlsaad, the explicit nonce), with a 16- and an 8-byte tag. Servers
# offer CCM only when told to (OpenSSL's DEFAULT leaves it out).
srv_opts=(-cipher ALL -ciphersuites TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256)
run "TLS 1.3 TLS_AES_128_CCM_SHA256" TLSv1.3 TLS_AES_128_CCM_SHA256 1 \
	-tls1_3 -ciphersuites TLS_AES_128_CCM_SHA256
run "TLS 1.3 TLS_AES_128_CCM_8_SHA256" TLSv1.3 TLS_AES_128_CCM_8_SHA256 1 \
	-tls1_3 -ciphersuites TLS_AES_128_CCM_8_SHA256
run "TLS 1.2 AES128-CCM" TLSv1.2 AES128-CCM 1 -tls1_2 -cipher AES128-CCM
run "TLS 1.2 AES256-CCM8" TLSv1.2 AES256-CCM8 1 -tls1_2 -cipher AES256-CCM8
srv_opts=()
# CBC: libssl and s_server negotiate encrypt-then-MAC by default; the
# cipher then only strips the padding (tls-mac-size 0).
etm -tls1_2 -cipher AES256-SHA256 || bad "AES256-SHA256: encrypt-then-MAC not negotiated"
run "TLS 1.2 AES256-SHA256 (encrypt-then-MAC)" TLSv1.2 AES256-SHA256 1 \
	-tls1_2 -cipher AES256-SHA256
# MAC-then-encrypt, where the cipher also cuts out the MAC (tls-mac)
# in constant time. For SHA-1 and SHA-256 suites libssl then fetches
# OpenSSL's stitched AES-CBC-HMAC cipher, which cryptod does not offer:
# those stay on the default provider (only the transfer is checked);
# SHA-384 has no stitched cipher and runs AES-CBC with tls-mac on
# cryptod.
etm -tls1_2 -cipher AES256-SHA256 -no_etm
[ $? = 1 ] || bad "AES256-SHA256 -no_etm: encrypt-then-MAC negotiated anyway"
run "TLS 1.2 ECDHE-RSA-AES256-SHA384 (MAC-then-encrypt)" TLSv1.2 ECDHE-RSA-AES256-SHA384 1 \
	-tls1_2 -cipher ECDHE-RSA-AES256-SHA384 -no_etm
run "TLS 1.2 AES256-SHA256 (MAC-then-encrypt, stitched)" TLSv1.2 AES256-SHA256 0 \
	-tls1_2 -cipher AES256-SHA256 -no_etm

# The daemon unreachable, fallback = fail (the example's): no connection,
# and the error names cryptod; nothing is left to the default provider
# behind the operator's back.
CRYPTOD_SOCKET=$tmp/nonexistent.sock fetch small.bin -tls1_3 &&
	[ "$(body_sha got.bin)" != no-response ] &&
	bad "daemon unreachable: the transfer went through"
grep -q "cryptod: daemon unreachable" srv.out cli.err ||
	bad "daemon unreachable: no error naming cryptod ($(grep -h error srv.out cli.err | head -2))"

# Not a gate: the same transfer with the default provider alone, for
# docs/provider.md.
t0=$(date +%s.%N)
tls_env=(env OPENSSL_CONF=/dev/null)
fetch big.bin -tls1_3 -ciphersuites TLS_AES_128_GCM_SHA256
t1=$(date +%s.%N)
[ "$(body_sha got.bin)" = "$want" ] || bad "default provider: the file arrived different"
python3 -c "import sys; t = float(sys.argv[2]) - float(sys.argv[1]); \
print('%-50s %5.2f s  %4.0f MiB/s' % ('TLS 1.3 TLS_AES_128_GCM_SHA256, default provider', t, 100 / t))" "$t0" "$t1"

prov_end
