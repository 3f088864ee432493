#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The proof that a daemon-held key never entered the program (issue 28,
# docs/asymmetric.md "Through the provider"), and nginx under a daemon
# restart and a key rotation.
#
# RSA-2048 and P-256 keys made here with openssl genpkey are imported into
# the daemon; their PEM files go to the scanner (prov_memscan) and to a
# control nginx only. Debian's nginx serves them from key-reference files
# (TLS 1.3 and 1.2 to curl, and a client certificate whose --key is a
# reference, so that curl signs in the daemon too), Python's ssl serves
# with load_cert_chain on a reference; then every nginx process, a curl
# still downloading and the Python server are read through /proc and no 8
# bytes of d, p, q, dP, dQ, qInv or the EC scalar (big-endian, or as
# BIGNUM limbs) may be there. The same scan must find the keys in the
# control nginx, which loaded the PEM files: a scanner that finds nothing
# fails the test.
#
# Then, under the running nginx: a reload's new workers serve; a key
# rotation leaves the running server signing with the version its
# certificate holds, also after a daemon restart under it (the key object
# pins the version it was opened with; this failed before); a handshake
# with the daemon down fails with cryptod in nginx's error log; a reload
# with the old certificate is refused (the reference now opens the new
# version) and the running workers go on; a reload with a certificate of
# the new version serves the new key; no worker dies of a signal.
#   test_prov_pkey_scan.sh CRYPTOD_BIN PROVIDER_DIR CRYPTOCTL MEMSCAN [SANITIZE]
set -uo pipefail
daemon=$1 provdir=$2 ctl=$3 scan=$4 sanitize=${5:-}
. "$(dirname "$0")/prov_lib.sh"
prov_need_unsanitized "$sanitize"
prov_need openssl python3 curl
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "SKIP: no nginx"; exit 77; }
[ -x "$scan" ] || { echo "SKIP: no $scan"; exit 77; }
prov_tmp pkscan
cd "$tmp" || exit 1
chmod 755 "$tmp"
daemon_up() { prov_keys_daemon; }
daemon_up
P=(-provider-path "$provdir" -provider default -provider cryptod)
prov_cnf prov.cnf

key_ops() { # NAME: the daemon's op count of the key (one key shown)
	"$ctl" key show "$1" --json | sed -n 's/.*"ops": \([0-9]*\).*/\1/p'
}
children() { # PID: its children's pids
	local f s a
	for f in /proc/[0-9]*/stat; do
		read -r s 2>/dev/null <"$f" || continue
		read -ra a <<<"${s##*) }"
		[ "${a[1]}" = "$1" ] && { f=${f#/proc/}; echo "${f%/stat}"; }
	done
}
wait_port() { # PORT
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# ---- the keys: made here, held by the daemon ----
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.key 2>/dev/null &&
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.key ||
	{ echo "FAIL: genpkey"; exit 1; }
for k in rsa ec; do
	"$ctl" key import "$k" --in "$k.key" >/dev/null || bad "import $k"
	"$ctl" key ref "$k" >"$k.ref" || bad "key ref $k"
	openssl req -new -x509 -key "$k.key" -subj "/CN=$k" \
		-addext "subjectAltName=DNS:$k" -days 2 -out "$k.crt" 2>/dev/null ||
		bad "certificate $k"
done
cp rsa.crt rsa-cur.crt
mkdir -p www logs ntmp ctl/logs
echo hello >www/index.html
head -c $((8 << 20)) /dev/zero >www/big
# Four free ports, held together while they are picked.
read -ra ports < <(python3 -c '
import socket
s = [socket.socket() for _ in range(4)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')

nginx_conf() { # FILE DIR RSAKEY ECKEY PORT1 PORT2
	local user_line=
	[ "$(id -u)" = 0 ] && user_line="user root root;"
	cat >"$1" <<NGX
worker_processes 2;
$user_line
pid $2/nginx.pid;
error_log $2/logs/error.log info;
env OPENSSL_CONF;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $tmp/ntmp/body;
	proxy_temp_path $tmp/ntmp/proxy;
	fastcgi_temp_path $tmp/ntmp/fastcgi;
	uwsgi_temp_path $tmp/ntmp/uwsgi;
	scgi_temp_path $tmp/ntmp/scgi;
	ssl_protocols TLSv1.2 TLSv1.3;
	ssl_verify_client optional;
	ssl_client_certificate $tmp/ec.crt;
	root $tmp/www;
	server {
		listen 127.0.0.1:$5 ssl;
		ssl_certificate $tmp/rsa-cur.crt;
		ssl_certificate_key $3;
		location = /who { return 200 "\$ssl_client_verify\n"; }
	}
	server {
		listen 127.0.0.1:$6 ssl;
		ssl_certificate $tmp/ec.crt;
		ssl_certificate_key $4;
		location = /who { return 200 "\$ssl_client_verify\n"; }
	}
}
NGX
}
npid='' cpid='' curlpid='' pypid=''
prov_cleanup() {
	local p
	for p in $curlpid $pypid $cpid $npid; do
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}
nginx_conf nginx.conf "$tmp" "$tmp/rsa.ref" "$tmp/ec.ref" "${ports[0]}" "${ports[1]}"
OPENSSL_CONF=$tmp/prov.cnf "$NGINX" -p "$tmp" -c "$tmp/nginx.conf" \
	-e "$tmp/logs/error.log" -g 'daemon off;' >nginx.out 2>&1 &
npid=$!
wait_port "${ports[0]}" && wait_port "${ports[1]}" ||
	{ cat nginx.out logs/error.log; echo "FAIL: nginx"; exit 1; }

# One handshake: KEY PORT CACERT [CURL ARGS...]; the body on stdout.
get() {
	local k=$1 port=$2 ca=$3
	shift 3
	curl -sS --cacert "$ca" --resolve "$k:$port:127.0.0.1" "$@" \
		"https://$k:$port/" 2>>curl.err
}
# Both versions against KEY's server on PORT, checked with CACERT; a
# second try allowed after a daemon restart.
serve() { # WHAT KEY PORT CACERT [TRIES]
	local what=$1 k=$2 port=$3 ca=$4 tries=${5:-1} v i out
	for v in "--tlsv1.3" "--tlsv1.2 --tls-max 1.2"; do
		for ((i = 0; i < tries; i++)); do
			# shellcheck disable=SC2086
			out=$(get "$k" "$port" "$ca" $v)
			[ "$out" = hello ] && break
		done
		[ "$out" = hello ] ||
			{ tail -n 5 curl.err logs/error.log; bad "$what: $k $v"; }
	done
}

echo "[${SECONDS}s] handshakes"
# ---- handshakes: nginx (RSA and P-256), curl's client key, Python ----
for i in 0 1; do
	k=$([ $i = 0 ] && echo rsa || echo ec)
	before=$(key_ops "$k")
	serve "nginx" "$k" "${ports[$i]}" "$k.crt"
	[ "$(key_ops "$k")" -ge $((before + 2)) ] ||
		bad "nginx $k: signatures not in the daemon"
done
# curl's own signature (its client certificate's CertificateVerify) in
# the daemon, TLS 1.3 and 1.2; nginx checked the certificate.
for v in "--tlsv1.3" "--tlsv1.2 --tls-max 1.2"; do
	before=$(key_ops ec)
	# shellcheck disable=SC2086
	out=$(OPENSSL_CONF=$tmp/prov.cnf curl -sS $v --cacert rsa.crt \
		--cert ec.crt --key ec.ref --resolve "rsa:${ports[0]}:127.0.0.1" \
		"https://rsa:${ports[0]}/who" 2>>curl.err)
	[ "$out" = SUCCESS ] || { tail -n 5 curl.err; bad "curl --key ref $v: '$out'"; }
	[ "$(key_ops ec)" -gt "$before" ] || bad "curl $v: signature not in the daemon"
done
cat >srv.py <<'PY'
import socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
print(s.getsockname()[1], flush=True)
while True:  # until killed, after the scan
    c, _ = s.accept()
    try:
        t = ctx.wrap_socket(c, server_side=True)
        t.recv(1024)
        t.sendall(b"HTTP/1.0 200 OK\r\n\r\nhello\n")
        t.close()
    except Exception as e:
        print("error", e, flush=True)
PY
before=$(key_ops rsa)
OPENSSL_CONF=$tmp/prov.cnf python3 srv.py rsa.crt rsa.ref >py.log 2>&1 &
pypid=$!
for _ in $(seq 100); do [ -s py.log ] && break; sleep 0.1; done
serve "python" rsa "$(head -1 py.log)" rsa.crt
grep error py.log && bad "python: handshake errors"
[ "$(key_ops rsa)" -ge $((before + 2)) ] || bad "python: signatures not in the daemon"

echo "[${SECONDS}s] the scan"
# ---- the scan: no secret number in nginx, curl or Python ----
# curl kept alive in a slow download with its client key a reference.
OPENSSL_CONF=$tmp/prov.cnf curl -sS --cacert rsa.crt --cert ec.crt \
	--key ec.ref --limit-rate 100k --resolve "rsa:${ports[0]}:127.0.0.1" \
	-o big.out "https://rsa:${ports[0]}/big" 2>>curl.err &
curlpid=$!
for _ in $(seq 100); do [ -s big.out ] && break; sleep 0.1; done
[ -s big.out ] || bad "curl: the download did not start"
# shellcheck disable=SC2207 # pids, one a line
pids=("$npid" $(children "$npid") "$curlpid" "$pypid")
[ ${#pids[@]} -ge 5 ] || bad "scan: ${#pids[@]} processes, want nginx's 3, curl, python"
"$scan" --key rsa.key --key ec.key "${pids[@]}" >scan.out 2>&1
rc=$?
cat scan.out
[ $rc = 0 ] || bad "scan: a secret number in a process ($rc)"
[ "$(grep -c 'bytes read' scan.out)" = ${#pids[@]} ] || bad "scan: not every process read"
kill "$curlpid" "$pypid" 2>/dev/null
wait "$curlpid" "$pypid" 2>/dev/null
curlpid='' pypid=''

echo "[${SECONDS}s] The control"
# The control: the same scan finds both keys, as BIGNUM limbs, in every
# process of an nginx that loaded the PEM files itself (the scanner can
# fail).
nginx_conf ctl/nginx.conf "$tmp/ctl" "$tmp/rsa.key" "$tmp/ec.key" "${ports[2]}" "${ports[3]}"
"$NGINX" -p "$tmp/ctl" -c "$tmp/ctl/nginx.conf" -e "$tmp/ctl/logs/error.log" \
	-g 'daemon off;' >ctl/nginx.out 2>&1 &
cpid=$!
if wait_port "${ports[2]}" && wait_port "${ports[3]}"; then
	[ "$(get rsa "${ports[2]}" rsa.crt)" = hello ] || bad "control: rsa"
	[ "$(get ec "${ports[3]}" ec.crt)" = hello ] || bad "control: ec"
	# shellcheck disable=SC2207 # pids, one a line
	pids=("$cpid" $(children "$cpid"))
	"$scan" --key rsa.key --key ec.key "${pids[@]}" >scan.out 2>&1
	rc=$?
	grep "^found" scan.out
	[ $rc = 1 ] || { cat scan.out; bad "control: the scanner found nothing ($rc)"; }
	for p in "${pids[@]}"; do
		for v in rsa.key:d ec.key:priv; do
			grep -q "^found $v (limbs) in pid $p " scan.out ||
				bad "control: $v not found in pid $p"
		done
	done
else
	cat ctl/nginx.out; bad "control nginx"
fi
kill "$cpid" && wait "$cpid" 2>/dev/null
cpid=''

echo "[${SECONDS}s] nginx under a reload"
# ---- nginx under a reload, a rotation, a daemon restart ----
new_workers() { # OLD...: wait until nginx's workers are none of OLD
	local w o
	for _ in $(seq 300); do # 30 s: old workers finish first
		w=$(children "$npid")
		for o in "$@"; do grep -qx "$o" <<<"$w" && w=; done
		[ "$(wc -w <<<"$w")" = 2 ] && return 0
		sleep 0.1
	done
	return 1
}
reload() {
	# The workers before the signal: read after it, a busy machine may
	# list the new ones already, which then never count as new.
	local old
	old=$(children "$npid")
	# nginx -s reads the configuration, the key references too.
	OPENSSL_CONF=$tmp/prov.cnf "$NGINX" -p "$tmp" -c "$tmp/nginx.conf" \
		-e "$tmp/logs/error.log" -s reload || bad "nginx -s reload"
	# shellcheck disable=SC2086 # pids, one a word
	new_workers $old || bad "reload: no new workers"
}
# (a) A reload's new workers (forked from the master, which read the
# key references again) serve.
reload
serve "reload" rsa "${ports[0]}" rsa.crt
serve "reload" ec "${ports[1]}" ec.crt
# (c) A rotation under the running server: it keeps signing with the
# version its certificate holds ...
"$ctl" key rotate rsa >/dev/null || bad "rotate"
"$ctl" key pub rsa >rsa2.pub
openssl x509 -in rsa.crt -noout -pubkey | cmp -s - rsa2.pub &&
	bad "rotate: the same key"
serve "rotated" rsa "${ports[0]}" rsa.crt
# (b) ... also after the daemon restarted under it: the workers' new
# sessions are on the pinned version. With the daemon down a handshake
# fails naming cryptod.
kill "$dpid" && wait "$dpid" 2>/dev/null
dpid=''
lines=$(wc -l <logs/error.log)
get rsa "${ports[0]}" rsa.crt --tlsv1.3 >/dev/null &&
	bad "a handshake with the daemon down"
tail -n +$((lines + 1)) logs/error.log |
	grep -q 'SSL_do_handshake() failed (SSL: error:[0-9A-F]*:cryptod::' ||
	{ tail -n 5 logs/error.log; bad "daemon down: no cryptod in nginx's error log"; }
daemon_up
before=$(key_ops rsa)
serve "restarted" rsa "${ports[0]}" rsa.crt 2
serve "restarted" ec "${ports[1]}" ec.crt 2
[ "$(key_ops rsa)" -ge $((before + 2)) ] ||
	bad "restarted: signatures not in the daemon"
# A reload with the old certificate now fails nginx's key check (the
# reference opens the newest version) and the running workers go on.
OPENSSL_CONF=$tmp/prov.cnf "$NGINX" -p "$tmp" -c "$tmp/nginx.conf" \
	-e "$tmp/logs/error.log" -s reload >reload.err 2>&1 &&
	bad "reload with the old certificate after a rotation"
grep -q "key values mismatch" reload.err logs/error.log ||
	{ cat reload.err; bad "refused reload: not for the key"; }
serve "refused reload" rsa "${ports[0]}" rsa.crt
# A reload with a certificate of the new version serves the new key.
openssl req -new -x509 -key cryptod:rsa "${P[@]}" -subj /CN=rsa \
	-addext subjectAltName=DNS:rsa -days 2 -out rsa2.crt 2>/dev/null ||
	bad "certificate of the new version"
openssl x509 -in rsa2.crt -noout -pubkey | cmp -s - rsa2.pub ||
	bad "rsa2.crt: not the new version's key"
cp rsa2.crt rsa-cur.crt
reload
serve "new version" rsa "${ports[0]}" rsa2.crt
get rsa "${ports[0]}" rsa.crt >/dev/null && bad "the old certificate after reload"
grep -E "exited on signal|core dumped" logs/error.log && bad "an nginx process died"
echo "[${SECONDS}s] done"
prov_end
