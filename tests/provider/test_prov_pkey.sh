#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Key pairs the daemon holds, through the provider (issue 28,
# docs/asymmetric.md "Through the provider"): openssl pkeyutl signs with
# cryptod:NAME (every row that signs; RSA PKCS#1 v1.5 and PSS with
# SHA-256/384/512; ECDSA; Ed25519/Ed448) and the signature verifies
# in-process against `cryptoctl key pub` (a rotated key's first version
# as cryptod:NAME?version=1); derives agree both ways with
# in-process keys; `req -x509 -key cryptod:NAME` makes a certificate that
# verifies and carries the key's public key; s_server -key cryptod:NAME
# serves TLS 1.3 and 1.2 to s_client (RSA-2048, ECDSA P-256), and again
# after the daemon restarted under it, and the key's op counter in the
# daemon grows. Refusals name cryptod: no such key, an
# X25519 key asked to sign, a sign-only key asked to derive, a key another
# uid may not use (X25519 asked to sign is refused by OpenSSL itself).
# RSA-OAEP decrypts in the daemon (pkeyutl -decrypt), PKCS#1 v1.5 not.
# With cryptod loaded first (-provider, or a configuration's order),
# s_server serves TLS 1.3 and 1.2 with ephemeral keys made in-process.
# A key-reference file (cryptoctl key ref) serves nginx (its
# ssl_certificate_key), Python's ssl and curl's --key with only
# OPENSSL_CONF naming the provider, and the openssl command's -inkey and
# -key FILE.
#   test_prov_pkey.sh CRYPTOD_BIN PROVIDER_DIR CRYPTOCTL [SANITIZE]
set -uo pipefail
daemon=$1 provdir=$2 ctl=$3 sanitize=${4:-}
. "$(dirname "$0")/prov_lib.sh"
prov_need_unsanitized "$sanitize"
prov_need openssl python3
prov_tmp pkey
cd "$tmp" || exit 1
daemon_up() { prov_keys_daemon; }
daemon_up

# The default provider first here; cryptod first at the end (either
# order works: docs/asymmetric.md, "Provider order").
P=(-provider-path "$provdir" -provider default -provider cryptod)

stats_signs() { # ALG: the daemon's signs with key pairs of ALG (cryptoctl stats)
	"$ctl" stats --json | python3 -c 'import json, sys
print(sum(k["sign"] for k in json.load(sys.stdin)["key_pair_ops"] if k["alg"] == sys.argv[1]))' "$1"
}
key_ops() { # NAME: the daemon's op count of the key
	"$ctl" key show "$1" --json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0]["ops"])'
}

for a in rsa-2048 rsa-3072 ec-p256 ec-p384 ec-p521 ed25519 ed448 x25519 x448; do
	"$ctl" key create "$a" --alg "$a" >/dev/null || bad "create $a"
	"$ctl" key pub "$a" >"$a.pub" || bad "pub $a"
done
"$ctl" key create signonly --alg ec-p256 --usage sign >/dev/null &&
	"$ctl" key pub signonly >signonly.pub || bad "create signonly"
head -c 1000 /dev/urandom >msg

# ---- signatures ----
sign_verify() { # KEY WHAT SIGNOPTS... -- VERIFYOPTS...
	local k=$1 what=$2
	shift 2
	local so=() vo=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do so+=("$1"); shift; done
	shift
	vo=("$@")
	rm -f sig
	openssl pkeyutl -sign -inkey "cryptod:$k" "${P[@]}" "${so[@]}" \
		-out sig 2>err || { cat err; bad "$k $what: sign"; return; }
	openssl pkeyutl -verify -pubin -inkey "$k.pub" "${vo[@]}" \
		-sigfile sig >/dev/null 2>err || { cat err; bad "$k $what: verify"; return; }
	# A signature of other data does not verify (the test can fail).
	openssl pkeyutl -verify -pubin -inkey "$k.pub" \
		"${vo[@]/#msg/other}" -sigfile sig >/dev/null 2>&1 &&
		bad "$k $what: verifies other data"
}
head -c 1000 /dev/urandom >other
for k in rsa-2048 rsa-3072; do
	for d in sha256 sha384 sha512; do
		openssl dgst -"$d" -binary msg >"msg.$d"
		openssl dgst -"$d" -binary other >"other.$d"
		sign_verify "$k" "pkcs1 $d" -in "msg.$d" -pkeyopt digest:$d -- \
			-in "msg.$d" -pkeyopt digest:$d
		sign_verify "$k" "pss $d" -in "msg.$d" -pkeyopt digest:$d \
			-pkeyopt rsa_padding_mode:pss -pkeyopt rsa_pss_saltlen:digest -- \
			-in "msg.$d" -pkeyopt digest:$d -pkeyopt rsa_padding_mode:pss \
			-pkeyopt rsa_pss_saltlen:digest
	done
done
for k in ec-p256 ec-p384 ec-p521; do
	for d in sha256 sha384 sha512; do
		sign_verify "$k" "ecdsa $d" -in "msg.$d" -pkeyopt digest:$d -- \
			-in "msg.$d" -pkeyopt digest:$d
	done
done
for k in ed25519 ed448; do
	sign_verify "$k" eddsa -rawin -in msg -- -rawin -in msg
done
# A version by number: cryptod:NAME?version=1 after a rotation signs with
# the first pair, cryptod:NAME with the newest.
cp ec-p384.pub ec-p384.v1.pub
"$ctl" key rotate ec-p384 >/dev/null || bad "rotate ec-p384"
"$ctl" key pub ec-p384 >ec-p384.pub
cmp -s ec-p384.pub ec-p384.v1.pub && bad "rotate: the same public key"
openssl pkeyutl -sign -inkey 'cryptod:ec-p384?version=1' "${P[@]}" \
	-in msg.sha384 -out sig 2>err || { cat err; bad "version=1: sign"; }
openssl pkeyutl -verify -pubin -inkey ec-p384.v1.pub -in msg.sha384 \
	-sigfile sig >/dev/null 2>&1 || bad "version=1: not the first pair's"
sign_verify ec-p384 "newest after rotate" -in msg.sha384 -- -in msg.sha384
# ---- derive, both ways ----
for k in ec-p256 ec-p384 ec-p521 x25519 x448; do
	case $k in
	ec-p*) openssl genpkey -algorithm EC -pkeyopt "ec_paramgen_curve:P-${k#ec-p}" -out peer.key ;;
	*) openssl genpkey -algorithm "$k" -out peer.key ;;
	esac
	openssl pkey -in peer.key -pubout -out peer.pub
	openssl pkeyutl -derive -inkey "cryptod:$k" -peerkey peer.pub "${P[@]}" \
		-out s1 2>err || { cat err; bad "$k: derive in the daemon"; continue; }
	openssl pkeyutl -derive -inkey peer.key -peerkey "$k.pub" -out s2
	[ -s s1 ] && cmp -s s1 s2 || bad "$k: secrets differ"
done

# ---- certificates and TLS ----
for k in rsa-2048 ec-p256; do
	openssl req -new -x509 -key "cryptod:$k" "${P[@]}" -subj "/CN=$k" \
		-days 2 -out "$k.crt" 2>err || { cat err; bad "$k: req -x509"; continue; }
	openssl verify -CAfile "$k.crt" "$k.crt" >/dev/null || bad "$k: verify"
	openssl x509 -in "$k.crt" -noout -pubkey | cmp -s - "$k.pub" ||
		bad "$k: the certificate's key is not the daemon's"
	before=$(key_ops "$k") signs=$(stats_signs "$k")
	port=$((20000 + RANDOM % 20000))
	openssl s_server -accept "127.0.0.1:$port" -key "cryptod:$k" \
		-cert "$k.crt" "${P[@]}" -naccept 3 -www >srv.log 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		grep -q ACCEPT srv.log && break
		sleep 0.1
	done
	for v in tls1_3 tls1_2 restart; do
		if [ "$v" = restart ]; then
			# The daemon restarts under the server: the next
			# handshake signs on a new connection and session.
			after=$(key_ops "$k")
			[ "$after" -ge $((before + 2)) ] ||
				bad "$k: the daemon made $((after - before)) signatures, want 2"
			# The handshake counters of cryptoctl stats (the
			# rows are named as the keys are).
			[ "$(stats_signs "$k")" -ge $((signs + 2)) ] ||
				bad "$k: cryptoctl stats counts $(($(stats_signs "$k") - signs)) signs, want 2"
			kill "$dpid" && wait "$dpid" 2>/dev/null
			daemon_up
			before=$(key_ops "$k")
			v=tls1_3
		fi
		echo Q | timeout 20 openssl s_client -connect "127.0.0.1:$port" \
			-"$v" -CAfile "$k.crt" -verify_return_error -brief \
			>cli.log 2>&1 || { cat cli.log srv.log; bad "$k $v: handshake"; }
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	[ "$(key_ops "$k")" -gt "$before" ] ||
		bad "$k: no signature in the restarted daemon"
done

# ---- key-reference files, with only OPENSSL_CONF naming the provider ----
prov_cnf prov.cnf
"$ctl" key ref ec-p256 >ec-p256.ref || bad "key ref"
grep -q "BEGIN CRYPTOD KEY REFERENCE" ec-p256.ref || bad "key ref: no PEM"
"$ctl" key ref nope >/dev/null 2>&1 && bad "key ref of no key"
# Python's ssl serves TLS 1.3 and 1.2 with load_cert_chain(cert, ref).
cat >srv.py <<'PY'
import socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
print(s.getsockname()[1], flush=True)
for _ in range(2):
    c, _ = s.accept()
    try:
        t = ctx.wrap_socket(c, server_side=True)
        t.sendall(b"hello\n")
        t.close()
    except Exception as e:
        print("error", e, flush=True)
PY
before=$(key_ops ec-p256)
OPENSSL_CONF=$tmp/prov.cnf python3 srv.py ec-p256.crt ec-p256.ref >py.log 2>&1 &
ppid=$!
for _ in $(seq 100); do [ -s py.log ] && break; sleep 0.1; done
port=$(head -1 py.log)
for v in tls1_3 tls1_2; do
	# Nothing sent: the server's close then loses no data to a reset.
	timeout 20 openssl s_client -connect "127.0.0.1:$port" -"$v" \
		-CAfile ec-p256.crt -verify_return_error -ign_eof \
		</dev/null >cli.log 2>&1
	grep -q "^hello" cli.log || { cat cli.log py.log; bad "python $v: no hello"; }
done
wait "$ppid"
grep error py.log && bad "python: handshake errors"
[ "$(key_ops ec-p256)" -ge $((before + 2)) ] || bad "python: signatures not in the daemon"
# curl's --key: a client certificate whose key is the daemon's.
if command -v curl >/dev/null; then
	before=$(key_ops ec-p256)
	openssl s_server -accept 127.0.0.1:0 -key cryptod:rsa-2048 \
		-cert rsa-2048.crt "${P[@]}" -Verify 1 -CAfile ec-p256.crt \
		-verify_return_error -naccept 1 -www >srv.log 2>&1 &
	spid=$!
	for _ in $(seq 100); do grep -q ACCEPT srv.log && break; sleep 0.1; done
	port=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' srv.log)
	OPENSSL_CONF=$tmp/prov.cnf curl -sS --cacert rsa-2048.crt \
		--cert ec-p256.crt --key ec-p256.ref \
		--resolve "rsa-2048:$port:127.0.0.1" "https://rsa-2048:$port/" \
		>curl.out 2>curl.err || { cat curl.err srv.log; bad "curl --key ref"; }
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	[ "$(key_ops ec-p256)" -gt "$before" ] || bad "curl: signature not in the daemon"
fi

# Debian's nginx (2 workers) with ssl_certificate_key a reference file:
# RSA-2048 and ECDSA P-256 servers, curl over TLS 1.3 and 1.2; the keys'
# op counts grow (the workers, forked after the keys were loaded, sign on
# connections of their own).
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ -x "$NGINX" ] && command -v curl >/dev/null; then
	chmod 755 "$tmp"
	"$ctl" key ref rsa-2048 >rsa-2048.ref || bad "key ref rsa-2048"
	mkdir -p www logs ntmp
	echo hello >www/index.html
	ports=()
	for _ in 1 2; do
		ports+=("$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')")
	done
	user_line=
	[ "$(id -u)" = 0 ] && user_line="user root root;"
	cat >nginx.conf <<NGX
worker_processes 2;
$user_line
pid $tmp/nginx.pid;
error_log $tmp/logs/error.log info;
env OPENSSL_CONF;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $tmp/ntmp/body;
	proxy_temp_path $tmp/ntmp/proxy;
	fastcgi_temp_path $tmp/ntmp/fastcgi;
	uwsgi_temp_path $tmp/ntmp/uwsgi;
	scgi_temp_path $tmp/ntmp/scgi;
	server {
		listen 127.0.0.1:${ports[0]} ssl;
		ssl_certificate $tmp/rsa-2048.crt;
		ssl_certificate_key $tmp/rsa-2048.ref;
		ssl_protocols TLSv1.2 TLSv1.3;
		root $tmp/www;
	}
	server {
		listen 127.0.0.1:${ports[1]} ssl;
		ssl_certificate $tmp/ec-p256.crt;
		ssl_certificate_key $tmp/ec-p256.ref;
		ssl_protocols TLSv1.2 TLSv1.3;
		root $tmp/www;
	}
}
NGX
	OPENSSL_CONF=$tmp/prov.cnf "$NGINX" -p "$tmp" -c "$tmp/nginx.conf" \
		-e "$tmp/logs/error.log" -g 'daemon off;' >nginx.out 2>&1 &
	npid=$!
	prov_cleanup() {
		kill -TERM "$npid" 2>/dev/null
		wait "$npid" 2>/dev/null
	}
	for _ in $(seq 100); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', ${ports[1]}), 1)" \
			2>/dev/null && break
		sleep 0.1
	done
	i=0
	for k in rsa-2048 ec-p256; do
		before=$(key_ops "$k")
		for v in "--tlsv1.3" "--tlsv1.2 --tls-max 1.2"; do
			# shellcheck disable=SC2086
			out=$(curl -sS $v --cacert "$k.crt" \
				--resolve "$k:${ports[$i]}:127.0.0.1" \
				"https://$k:${ports[$i]}/" 2>curl.err)
			[ "$out" = hello ] || { cat curl.err nginx.out logs/error.log; bad "nginx $k $v"; }
		done
		[ "$(key_ops "$k")" -ge $((before + 2)) ] ||
			bad "nginx $k: signatures not in the daemon"
		i=$((i + 1))
	done
	prov_cleanup
else
	echo "note: no nginx or curl, nginx not tried"
fi

# ---- refusals, naming cryptod ----
refused() { # WHAT CMD...: fails, and says cryptod
	local what=$1
	shift
	"$@" >out 2>err && { bad "$what: succeeded"; return; }
	grep -q cryptod err || { cat err; bad "$what: no cryptod in the error"; }
}
refused "no such key" openssl pkeyutl -sign -inkey cryptod:nope "${P[@]}" \
	-in msg.sha256
# OpenSSL itself refuses this one (X25519 has no signature scheme).
openssl pkeyutl -sign -rawin -inkey cryptod:x25519 "${P[@]}" -in msg \
	>/dev/null 2>&1 && bad "x25519 signs"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out peer.key
openssl pkey -in peer.key -pubout -out peer.pub
refused "sign-only key derives" openssl pkeyutl -derive \
	-inkey cryptod:signonly -peerkey peer.pub "${P[@]}"
refused "bad version" openssl pkeyutl -sign -inkey 'cryptod:ec-p256?version=x' \
	"${P[@]}" -in msg.sha256
# Another uid: nobody is on no key's ACL (the keys above are root's).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	chmod 0755 "$tmp"
	chmod 0666 "$CRYPTOD_SOCKET"
	refused "another uid" setpriv --reuid=nobody --regid=nogroup \
		--clear-groups openssl pkeyutl -sign -inkey cryptod:ec-p256 \
		"${P[@]}" -in msg.sha256
else
	echo "note: not root, another uid not tried"
fi

# ---- RSA-OAEP decryption in the daemon ----
# pkeyutl -decrypt -inkey cryptod:NAME of what openssl encrypted
# in-process with the public key (SHA-1/256/384); no PKCS#1 v1.5
# decryption, said naming cryptod.
head -c 48 /dev/urandom >pt
for d in sha1 sha256 sha384; do
	oaep=(-pkeyopt rsa_padding_mode:oaep -pkeyopt "rsa_oaep_md:$d")
	openssl pkeyutl -encrypt -pubin -inkey rsa-2048.pub "${oaep[@]}" \
		-in pt -out ct || bad "oaep $d: encrypt in-process"
	openssl pkeyutl -decrypt -inkey cryptod:rsa-2048 "${P[@]}" "${oaep[@]}" \
		-in ct -out pt2 2>err || { cat err; bad "oaep $d: decrypt"; }
	cmp -s pt pt2 || bad "oaep $d: not the plaintext"
done
openssl pkeyutl -encrypt -pubin -inkey rsa-2048.pub -in pt -out ct
refused "PKCS#1 v1.5 decryption" openssl pkeyutl -decrypt \
	-inkey cryptod:rsa-2048 "${P[@]}" -in ct

# ---- key-reference files through the openssl command ----
# Its -inkey and -key FILE go through OpenSSL's file: store (not
# PEM_read_bio_PrivateKey as nginx's): pkeyutl signs with a reference
# file whichever provider comes first, s_server serves TLS 1.3 with one,
# the daemon signing; a reference to no key is refused.
PR=(-provider-path "$provdir" -provider cryptod -provider default)
"$ctl" key ref rsa-2048 >rsa-2048.ref || bad "key ref rsa-2048"
for order in P PR; do
	declare -n A=$order
	before=$(key_ops ec-p256)
	openssl pkeyutl -sign -inkey ec-p256.ref "${A[@]}" -in msg.sha256 \
		-out sig 2>err || { cat err; bad "$order: pkeyutl -inkey FILE"; }
	openssl pkeyutl -verify -pubin -inkey ec-p256.pub -in msg.sha256 \
		-sigfile sig >/dev/null 2>&1 || bad "$order: -inkey FILE: does not verify"
	[ "$(key_ops ec-p256)" -gt "$before" ] ||
		bad "$order: -inkey FILE: not signed in the daemon"
	unset -n A
done
before=$(key_ops rsa-2048)
openssl s_server -accept 127.0.0.1:0 -key rsa-2048.ref -cert rsa-2048.crt \
	"${P[@]}" -naccept 1 -www >srv.log 2>&1 &
spid=$!
for _ in $(seq 100); do grep -q ACCEPT srv.log && break; sleep 0.1; done
port=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' srv.log)
echo Q | timeout 20 openssl s_client -connect "127.0.0.1:$port" -tls1_3 \
	-CAfile rsa-2048.crt -verify_return_error -brief >cli.log 2>&1 ||
	{ cat cli.log srv.log; bad "s_server -key FILE: handshake"; }
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
[ "$(key_ops rsa-2048)" -gt "$before" ] || bad "s_server -key FILE: not signed in the daemon"
{
	echo "-----BEGIN CRYPTOD KEY REFERENCE-----"
	printf 'cryptod-key-ref 1\nname nope\nversion 0\nsocket %s\n' \
		"$CRYPTOD_SOCKET" | base64
	echo "-----END CRYPTOD KEY REFERENCE-----"
} >nope.ref
# (OpenSSL's store drops the decoder's error: no cryptod to look for.)
openssl pkeyutl -sign -inkey nope.ref "${P[@]}" -in msg.sha256 \
	>/dev/null 2>&1 && bad "-inkey FILE of no key: signed"

# ---- cryptod first ----
# A handshake's ephemeral key is made by type name, with no key yet:
# with cryptod loaded first that finds our key management, which makes
# the program's own key in-process (prov_pkey_own.c). s_server and
# s_client with `-provider cryptod -provider default`, and with only a
# configuration whose cryptod section comes first: TLS 1.3 and 1.2
# (ECDHE), the daemon signing. (cryptod's digests and MACs first would
# take TLS 1.3's HKDF, whose empty HMAC key the daemon refuses:
# algorithms = ciphers, as cryptod-provider-tls.cnf has it.)
cat >first.cnf <<CNF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
cryptod = cryptod_sect
default = default_sect
[cryptod_sect]
module = $provdir/cryptod.so
activate = 1
algorithms = ciphers
[default_sect]
activate = 1
CNF
first_tls() { # WHAT [OPENSSL ARGS...]: s_server and s_client take them
	local what=$1 v port spid before
	shift
	before=$(key_ops ec-p256)
	openssl s_server -accept 127.0.0.1:0 -key cryptod:ec-p256 \
		-cert ec-p256.crt "$@" -naccept 2 -www >srv.log 2>&1 &
	spid=$!
	for _ in $(seq 100); do grep -q ACCEPT srv.log && break; sleep 0.1; done
	port=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' srv.log)
	for v in tls1_3 tls1_2; do
		echo Q | timeout 20 openssl s_client -connect "127.0.0.1:$port" \
			-"$v" -CAfile ec-p256.crt -verify_return_error -brief "$@" \
			>cli.log 2>&1 || { cat cli.log srv.log; bad "$what $v: handshake"; }
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	[ "$(key_ops ec-p256)" -ge $((before + 2)) ] ||
		bad "$what: signatures not in the daemon"
}
CRYPTOD_PROVIDER_ALGORITHMS=ciphers first_tls "-provider cryptod first" "${PR[@]}"
OPENSSL_CONF=$tmp/first.cnf first_tls "configuration, cryptod first"
prov_end
