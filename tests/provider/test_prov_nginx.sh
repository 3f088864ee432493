#!/usr/bin/env bash
# A real server and real clients through cryptod's provider, loaded only
# through OPENSSL_CONF: Debian's nginx (2 workers) serves HTTPS, curl
# downloads a 1 GiB file over TLS 1.3 (TLS_AES_128_GCM_SHA256) and a
# 32 MiB one over TLS 1.2 (ECDHE-RSA-AES128-GCM-SHA256), Python's ssl
# module (http.client) fetches 32 MiB over TLS 1.3 (AES-256-GCM) and
# TLS 1.2 (ECDHE-RSA-AES256-GCM-SHA384); every sha256 equals the file's,
# nginx's log names the protocol and suite, and the daemon saw the bytes:
# its engines' byte counters, and its clients by name (openssl/nginx,
# openssl/curl, openssl/python3). With no daemon behind its provider,
# curl must fail, naming cryptod.
#   test_prov_nginx.sh CRYPTOD_BIN PROVIDER_DIR CRYPTOCTL [SANITIZE]
# Environment: NGINX_WORKERS (default 2), BIG_MIB (default 1024),
# NGINX_STRICT_NAMES (default 1; 0 accepts any openssl/ client name).
set -uo pipefail
daemon=$1 provdir=$(realpath "$2") ctl=$3 sanitize=${4:-}
. "$(dirname "$0")/prov_lib.sh"
prov_need_unsanitized "$sanitize"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "SKIP: no nginx (scripts/deps.sh installs it)"; exit 77; }
for t in curl python3 openssl; do
	command -v $t >/dev/null || { echo "FAIL: no $t (scripts/deps.sh)"; exit 1; }
done
[ -x "$daemon" ] || { echo "FAIL: no daemon at $daemon"; exit 1; }
WORKERS=${NGINX_WORKERS:-2}
BIG_MIB=${BIG_MIB:-1024}

npid= ppid=
prov_cleanup() {
	[ -n "$ppid" ] && kill "$ppid" 2>/dev/null
	if [ -n "$npid" ] && kill -0 "$npid" 2>/dev/null; then
		kill -TERM "$npid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$npid" 2>/dev/null || break; sleep 0.1; done
		pkill -KILL -P "$npid" 2>/dev/null # its workers
		kill -KILL "$npid" 2>/dev/null
	fi
}
prov_tmp nginx
chmod 755 "$tmp"

export CRYPTOD_SOCKET=$tmp/cryptod.sock
prov_daemon_start "$CRYPTOD_SOCKET"

# The provider for every program, from one openssl.cnf, as the
# installed cryptod-provider-tls.cnf sets it up (docs/provider.md, TLS):
# the property preference makes libssl fetch cryptod's ciphers (without
# it OpenSSL may pick either provider's); algorithms = ciphers leaves the
# handshake's digests, MACs and KDFs to the default provider, and the
# random generator is pinned there. fallback = fail: a record the daemon
# cannot do fails the connection instead of running in-process.
cat >"$tmp/prov.cnf" <<EOF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
alg_section = alg_sect
random = random_sect
[alg_sect]
default_properties = ?provider=cryptod
[random_sect]
properties = provider=default
[provider_sect]
default = default_sect
cryptod = cryptod_sect
[default_sect]
activate = 1
[cryptod_sect]
activate = 1
module = $provdir/cryptod.so
socket = $CRYPTOD_SOCKET
algorithms = ciphers
fallback = fail
EOF

# A throwaway certificate (no provider).
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/key.pem" \
	-out "$tmp/cert.pem" -days 1 -subj /CN=localhost \
	-addext subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1 ||
	{ echo "FAIL: openssl req"; exit 1; }

# The files: BIG_MIB sparse, with 1 MiB of random bytes every 64 MiB at
# an odd offset (a misplaced or repeated record changes the checksum,
# and the file takes 16 MiB of disk); 32 MiB random.
mkdir -p "$tmp/www" "$tmp/logs" "$tmp/tmp"
truncate -s "${BIG_MIB}M" "$tmp/www/big"
for ((off = 0; off < BIG_MIB; off += 64)); do
	head -c $((1 << 20)) /dev/urandom |
		dd of="$tmp/www/big" bs=1M seek=$(((off << 20) + 4097)) \
			oflag=seek_bytes iflag=fullblock conv=notrunc status=none
done
head -c $((32 << 20)) /dev/urandom >"$tmp/www/mid"
sum_big=$(sha256sum <"$tmp/www/big" | cut -d' ' -f1)
sum_mid=$(sha256sum <"$tmp/www/mid" | cut -d' ' -f1)
[ "$(stat -c %s "$tmp/www/big")" = $((BIG_MIB << 20)) ] || bad "big file size"

# Port: the first free one from a pid-derived start.
port=
for ((p = 20000 + $$ % 20000, i = 0; i < 50; p++, i++)); do
	python3 -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1', $p))" 2>/dev/null &&
		{ port=$p; break; }
done
[ -n "$port" ] || { echo "FAIL: no free port"; exit 1; }

# nginx as root would drop its workers to nobody; keep them as the
# test's user (the daemon's socket is the test's).
user_line=
[ "$(id -u)" = 0 ] && user_line="user root root;"
# nginx clears its workers' environment except what env lists; the
# workers inherit the master's loaded OpenSSL config through fork, and
# env OPENSSL_CONF keeps it for a binary upgrade (re-exec) too.
cat >"$tmp/nginx.conf" <<EOF
worker_processes $WORKERS;
$user_line
pid $tmp/nginx.pid;
error_log $tmp/logs/error.log info;
env OPENSSL_CONF;
env CRYPTOD_SOCKET;
events { worker_connections 64; }
http {
	log_format tls '\$request_uri \$status \$body_bytes_sent \$ssl_protocol \$ssl_cipher';
	access_log $tmp/logs/access.log tls;
	client_body_temp_path $tmp/tmp/body;
	proxy_temp_path $tmp/tmp/proxy;
	fastcgi_temp_path $tmp/tmp/fastcgi;
	uwsgi_temp_path $tmp/tmp/uwsgi;
	scgi_temp_path $tmp/tmp/scgi;
	default_type application/octet-stream;
	server {
		listen 127.0.0.1:$port ssl;
		ssl_certificate $tmp/cert.pem;
		ssl_certificate_key $tmp/key.pem;
		ssl_protocols TLSv1.2 TLSv1.3;
		ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384;
		root $tmp/www;
	}
}
EOF
OPENSSL_CONF=$tmp/prov.cnf "$NGINX" -p "$tmp" -c "$tmp/nginx.conf" \
	-e "$tmp/logs/error.log" -g 'daemon off;' >"$tmp/nginx.out" 2>&1 &
npid=$!
up=
for _ in $(seq 100); do
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" \
		2>/dev/null && { up=1; break; }
	kill -0 "$npid" 2>/dev/null || break
	sleep 0.1
done
[ -n "$up" ] || { cat "$tmp/nginx.out" "$tmp/logs/error.log"; echo "FAIL: nginx did not start"; exit 1; }

# The daemon's view: its engines' bytes, and each client's bytes by
# name (a client shows while connected: poll during a transfer and keep
# each one's largest count).
engine_bytes() {
	"$ctl" stats --json | python3 -c '
import json, sys
print(sum(e["bytes"] for e in json.load(sys.stdin)["engines"]))'
}
poll_start() {
	: >"$tmp/poll"
	(while :; do
		"$ctl" clients --json >>"$tmp/poll" 2>/dev/null
		sleep 0.3
	done) &
	ppid=$!
}
poll_stop() {
	kill "$ppid" 2>/dev/null
	wait "$ppid" 2>/dev/null
	ppid=
	"$ctl" clients --json >>"$tmp/poll" 2>/dev/null
}
# Bytes by client name over the poll: the sum over clients (connection
# ids) of the largest count seen for each.
client_bytes() { # NAME
	python3 - "$tmp/poll" "$1" <<'EOF'
import json, re, sys
best = {}
for doc in re.findall(r'\{"clients": \[.*?\n\]\}', open(sys.argv[1]).read(), re.S):
    for c in json.loads(doc)["clients"]:
        if c["name"] == sys.argv[2]:
            best[c["client_id"]] = max(best.get(c["client_id"], 0), c["bytes"])
print(sum(best.values()))
EOF
}
# nginx's clients now (they stay connected), found by pid: the master
# and its workers. Prints the total and the master's share.
nginx_clients() {
	"$ctl" clients --json | python3 -c '
import json, os, sys
master = int(sys.argv[1])
pids = {master}
for d in os.listdir("/proc"):
    try:
        if d.isdigit() and int(open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()[1]) == master:
            pids.add(int(d))
    except OSError:
        pass
cs = [c for c in json.load(sys.stdin)["clients"] if c["pid"] in pids]
if sys.argv[2] == "bytes":
    print(sum(c["bytes"] for c in cs), sum(c["bytes"] for c in cs if c["pid"] == master))
else:
    for c in cs:
        print(c["pid"], "master" if c["pid"] == master else "worker", c["bytes"], c["name"])' "$npid" "$1"
}

url=https://localhost:$port
# The process substitution's sha256sum finishes after the download.
sum_wait() { # FILE
	for _ in $(seq 100); do [ -s "$1" ] && return; sleep 0.1; done
}
fetch_curl() { # NAME FILE SIZE WANT_SUM PROTO SUITE curl-args...
	local name=$1 file=$2 size=$3 want=$4 proto=$5 suite=$6
	shift 6
	local e0 n0 m0 e1 n1 m1 got cb t0 t1
	e0=$(engine_bytes)
	read -r n0 m0 <<<"$(nginx_clients bytes)"
	poll_start
	t0=$(date +%s.%N)
	got=$(OPENSSL_CONF=$tmp/prov.cnf timeout 120 curl -sS --cacert "$tmp/cert.pem" \
		"$@" -o >(sha256sum >"$tmp/sum.$name") \
		-w '%{http_code} %{size_download}' "$url/$file" 2>"$tmp/curl.$name")
	t1=$(date +%s.%N)
	poll_stop
	sum_wait "$tmp/sum.$name"
	[ "$got" = "200 $size" ] || { cat "$tmp/curl.$name"; bad "$name: curl: $got, want 200 $size"; return; }
	[ "$(cut -d' ' -f1 "$tmp/sum.$name")" = "$want" ] || bad "$name: sha256 differs"
	grep -q "^/$file 200 $size $proto $suite\$" "$tmp/logs/access.log" ||
		bad "$name: nginx did not log $proto $suite: $(tail -1 "$tmp/logs/access.log")"
	e1=$(engine_bytes)
	read -r n1 m1 <<<"$(nginx_clients bytes)"
	cb=$(client_bytes openssl/curl)
	# nginx sealed every record and curl opened it: the file through
	# nginx's clients, and again through the daemon's engines from
	# someone else, and curl is the only other program here. A poll
	# names curl's client while it runs (on a transfer long enough for
	# one: the last poll may miss the final records, so at least half).
	[ $((n1 - n0)) -ge "$size" ] || bad "$name: nginx's clients counted $((n1 - n0)) bytes, want >= $size"
	# The workers serve, each on its own connection, not the master's.
	[ $((m1 - m0)) -lt $((1 << 20)) ] || bad "$name: nginx's master's connection counted $((m1 - m0)) bytes"
	[ $((e1 - e0 - (n1 - n0))) -ge "$size" ] ||
		bad "$name: the engines counted $((e1 - e0 - (n1 - n0))) bytes besides nginx's, want >= $size"
	[ "$size" -lt $((256 << 20)) ] || [ "$cb" -ge $((size / 2)) ] ||
		bad "$name: openssl/curl counted $cb bytes, want >= $((size / 2))"
	python3 -c "import sys; t = float(sys.argv[2]) - float(sys.argv[1]); \
print('%s: %d MiB in %.1f s, %.0f MiB/s; daemon: engines +%d, nginx +%d, openssl/curl seen %d' % \
(sys.argv[3], int(sys.argv[4]) >> 20, t, (int(sys.argv[4]) >> 20) / t, int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])))" \
		"$t0" "$t1" "$name" "$size" $((e1 - e0)) $((n1 - n0)) "$cb"
}

fetch_curl tls13-big big $((BIG_MIB << 20)) "$sum_big" TLSv1.3 TLS_AES_128_GCM_SHA256 \
	--tlsv1.3 --tls13-ciphers TLS_AES_128_GCM_SHA256
fetch_curl tls12-mid mid $((32 << 20)) "$sum_mid" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 \
	--tlsv1.2 --tls-max 1.2 --ciphers ECDHE-RSA-AES128-GCM-SHA256

# The records depend on the daemon: curl with the provider pointed at a
# socket where no daemon listens (fallback = fail) must not get the
# file, and says why, naming cryptod.
sed "s|^socket = .*|socket = $tmp/nobody.sock|" "$tmp/prov.cnf" >"$tmp/nodaemon.cnf"
if OPENSSL_CONF=$tmp/nodaemon.cnf timeout 30 curl -sS --cacert "$tmp/cert.pem" \
	--tlsv1.3 -o /dev/null "$url/mid" 2>"$tmp/curl.nodaemon"; then
	bad "curl got the file with no daemon behind its provider"
elif ! grep -q "cryptod" "$tmp/curl.nodaemon"; then
	bad "curl with no daemon failed without naming cryptod: $(cat "$tmp/curl.nodaemon")"
else
	echo "no daemon: curl fails, $(head -c 160 "$tmp/curl.nodaemon")"
fi

# Python's ssl through http.client: it asks the daemon, while its own
# connection is open, how many bytes openssl/python3 (this pid) sent.
fetch_py() { # NAME PROTO SUITE MAXVER
	local out
	# The body goes to sha256sum, not hashlib: with algorithms = all,
	# hashlib's sha256 would be the provider's, and its hexdigest()
	# copies the context, which the provider cannot do past 64 KiB.
	out=$(OPENSSL_CONF=$tmp/prov.cnf timeout 60 python3 - "$port" "$tmp/cert.pem" \
		"$ctl" "$4" <<'EOF' 2>&1 3> >(sha256sum >"$tmp/sum.$1")
import http.client, json, os, ssl, subprocess, sys
port, ca, ctl, maxver = sys.argv[1:]
ctx = ssl.create_default_context(cafile=ca)
ctx.maximum_version = getattr(ssl.TLSVersion, maxver)
if maxver == "TLSv1_2":
    ctx.set_ciphers("ECDHE-RSA-AES256-GCM-SHA384")
c = http.client.HTTPSConnection("localhost", int(port), context=ctx)
c.request("GET", "/mid")
r = c.getresponse()
out = os.fdopen(3, "wb")
n = 0
while True:
    b = r.read(65536)
    if not b:
        break
    out.write(b)
    n += len(b)
out.close()
ver, suite = c.sock.version(), c.sock.cipher()[0]
c.close()
me = [x for x in json.loads(subprocess.run([ctl, "clients", "--json"],
      capture_output=True, check=True).stdout)["clients"] if x["pid"] == os.getpid()]
print(r.status, n, ver, suite,
      me[0]["name"] if me else "-", me[0]["bytes"] if me else 0)
EOF
	)
	local status n ver suite cname cbytes
	read -r status n ver suite cname cbytes <<<"$out"
	[ "$status $n" = "200 $((32 << 20))" ] || { echo "$out"; bad "$1: python: $status $n"; return; }
	sum_wait "$tmp/sum.$1"
	[ "$(cut -d' ' -f1 "$tmp/sum.$1")" = "$sum_mid" ] || bad "$1: python: sha256 differs"
	[ "$ver $suite" = "$2 $3" ] || bad "$1: python negotiated $ver $suite, want $2 $3"
	[ "$cname" = openssl/python3 ] || bad "$1: python's daemon client is named '$cname'"
	[ "$cbytes" -ge $((32 << 20)) ] || bad "$1: openssl/python3 counted $cbytes bytes"
	echo "$1: python3 $ver $suite, 32 MiB, sha256 equal; openssl/python3 $cbytes bytes"
}
fetch_py py-tls13 TLSv1.3 TLS_AES_256_GCM_SHA384 TLSv1_3
fetch_py py-tls12 TLSv1.2 ECDHE-RSA-AES256-GCM-SHA384 TLSv1_2

# nginx's processes: the master and its workers, each a client of its
# own (fork-safe provider: a worker does not use the master's
# connection), named openssl/nginx. NGINX_STRICT_NAMES=0 accepts any
# openssl/ name (see tests/provider/CMakeLists.txt).
nginx_clients list >"$tmp/nclients"
sed 's/^/nginx client: /' "$tmp/nclients"
[ "$(grep -c ' worker ' "$tmp/nclients")" -ge 1 ] || bad "no nginx worker is a client of its own"
while read -r pid role b name; do
	case "${NGINX_STRICT_NAMES:-1}:$name" in
	*:openssl/nginx) ;;
	0:openssl/*) ;; # a name taken from nginx's rewritten argv[0]
	*) bad "nginx $role $pid is the daemon's client '$name', want openssl/nginx" ;;
	esac
done <"$tmp/nclients"

# A clean stop: nginx's workers leave within its shutdown time (a
# worker stuck in the provider's teardown is killed with signal 9).
kill -QUIT "$npid"
for _ in $(seq 100); do kill -0 "$npid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$npid" 2>/dev/null; then
	bad "nginx did not exit within 10 s of SIGQUIT"
else
	wait "$npid" 2>/dev/null
	npid=
fi
grep -E "exited on signal|\[(crit|alert|emerg)\]" "$tmp/logs/error.log" && bad "nginx logged the above"

if [ "$fails" -ne 0 ]; then
	echo "--- nginx error.log (tail)"
	tail -20 "$tmp/logs/error.log"
fi
prov_end
