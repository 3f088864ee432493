#!/usr/bin/env bash
# nginx + curl download throughput with and without cryptod's provider,
# in one run: two nginx instances (2 workers each) serve the same sparse
# file over HTTPS, one with the provider loaded through OPENSSL_CONF,
# one with OpenSSL's default provider alone; curl downloads it from
# each, with and without the provider to match, alternating round by
# round, TLS 1.3 (TLS_AES_128_GCM_SHA256, or TLS13_SUITE) and TLS 1.2
# ECDHE-RSA-AES128-GCM-SHA256. Per download: wall time, MiB/s, and the
# CPU seconds curl, nginx's workers and the daemon spent. Each server's body is
# checked against the file's sha256 once per suite, in an untimed
# download; timed ones go to /dev/null. Prints the machine first.
#
#   bench/provider-nginx.sh [BUILD_DIR]      (default: build)
#
# Environment: MIB (file size, default 1024), ROUNDS (default 3),
# DAEMON_WORKERS (the daemon's --workers; default: the daemon's own),
# DAEMON_ARGS (more daemon options, split on spaces, e.g. "--spin-us 20"),
# TLS13_SUITE (curl's TLS 1.3 suite, default TLS_AES_128_GCM_SHA256; e.g.
# TLS_CHACHA20_POLY1305_SHA256), CURL_PROVIDER (match, the default: curl
# uses the provider when the server does; off: curl always runs OpenSSL's
# default provider, as a client on another host would, so only the
# server's records go to the daemon).
# Needs nginx and curl (scripts/deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$(realpath "${1:-build}")
MIB=${MIB:-1024}
ROUNDS=${ROUNDS:-3}
TLS13_SUITE=${TLS13_SUITE:-TLS_AES_128_GCM_SHA256}
CURL_PROVIDER=${CURL_PROVIDER:-match}
case $CURL_PROVIDER in match | off) ;; *)
	echo "provider-nginx: CURL_PROVIDER is match or off, not $CURL_PROVIDER" >&2
	exit 2
	;;
esac
CTL=$BUILD/cli/cryptoctl
PROV=$BUILD/provider/cryptod.so
[ -x "$CTL" ] && [ -x "$BUILD/daemon/cryptod" ] && [ -f "$PROV" ] || {
	echo "provider-nginx: build first ($CTL or $PROV missing)" >&2
	exit 2
}
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] && command -v curl >/dev/null || {
	echo "provider-nginx: needs nginx and curl (scripts/deps.sh)" >&2
	exit 2
}
dir=$(mktemp -d)
dpid= npids=()
cleanup() {
	for p in "${npids[@]}"; do kill -TERM "$p" 2>/dev/null || :; done
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
chmod 755 "$dir"
export CRYPTOD_SOCKET=$dir/s.sock
wopt=()
[ -z "${DAEMON_WORKERS:-}" ] || wopt=(--workers "$DAEMON_WORKERS")
# shellcheck disable=SC2206
[ -z "${DAEMON_ARGS:-}" ] || wopt+=(${DAEMON_ARGS})
"$BUILD/daemon/cryptod" --no-config --socket "$CRYPTOD_SOCKET" "${wopt[@]}" \
	--log-level warn 2>"$dir/daemon.log" &
dpid=$!
for _ in $(seq 100); do "$CTL" ping >/dev/null 2>&1 && break; sleep 0.05; done

# The machine line every benchmark prints (CPU model, flags, the code
# ipsec-mb picks), from a tiny run of the stream mode.
"$CTL" bench stream --total 16 --rounds 1 | sed -n 1,4p
echo "$("$NGINX" -v 2>&1 | sed 's/.*: //'), $(curl -V | awk 'NR == 1 { print $1, $2, $5 }')"

# The provider as tests/provider/test_prov_nginx.sh loads it (see there
# for why each line); "off" is the same file without the cryptod lines.
cat >"$dir/on.cnf" <<EOF
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
module = $PROV
socket = $CRYPTOD_SOCKET
algorithms = ciphers
fallback = fail
EOF
cat >"$dir/off.cnf" <<EOF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
default = default_sect
[default_sect]
activate = 1
EOF
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" -out "$dir/cert.pem" \
	-days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost >/dev/null 2>&1
mkdir -p "$dir/www"
truncate -s "${MIB}M" "$dir/www/f"
head -c $((1 << 20)) /dev/urandom | dd of="$dir/www/f" bs=1M conv=notrunc status=none
want=$(sha256sum <"$dir/www/f" | cut -d' ' -f1)

free_port() {
	local p
	for ((p = 20000 + RANDOM % 20000; ; p++)); do
		python3 -c "import socket; socket.socket().bind(('127.0.0.1', $p))" 2>/dev/null &&
			{ echo $p; return; }
	done
}
declare -A port
for mode in on off; do
	port[$mode]=$(free_port)
	user_line=
	[ "$(id -u)" = 0 ] && user_line="user root root;"
	mkdir -p "$dir/$mode/tmp"
	cat >"$dir/$mode/nginx.conf" <<EOF
worker_processes 2;
$user_line
pid $dir/$mode/nginx.pid;
error_log $dir/$mode/error.log warn;
env OPENSSL_CONF;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $dir/$mode/tmp/body;
	proxy_temp_path $dir/$mode/tmp/proxy;
	fastcgi_temp_path $dir/$mode/tmp/fastcgi;
	uwsgi_temp_path $dir/$mode/tmp/uwsgi;
	scgi_temp_path $dir/$mode/tmp/scgi;
	server {
		listen 127.0.0.1:${port[$mode]} ssl;
		ssl_certificate $dir/cert.pem;
		ssl_certificate_key $dir/key.pem;
		ssl_protocols TLSv1.2 TLSv1.3;
		ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256;
		root $dir/www;
	}
}
EOF
	OPENSSL_CONF=$dir/$mode.cnf "$NGINX" -p "$dir/$mode" -c "$dir/$mode/nginx.conf" \
		-e "$dir/$mode/error.log" -g 'daemon off;' >"$dir/$mode/out" 2>&1 &
	npids+=($!)
	eval "npid_$mode=$!"
done
for mode in on off; do
	for _ in $(seq 100); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port[$mode]}), 1)" \
			2>/dev/null && break
		sleep 0.1
	done
done

# CPU seconds (user + system) of a process and its children threads:
# the daemon, and nginx's workers (the children of a master).
cpu_of() { # PID...
	python3 - "$@" <<'EOF'
import os, sys
hz = os.sysconf("SC_CLK_TCK")
t = 0
for p in sys.argv[1:]:
    try:
        f = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
        t += int(f[11]) + int(f[12])
    except OSError:
        pass
print("%.2f" % (t / hz))
EOF
}
workers_of() { pgrep -P "$1" || :; } # MASTER

# One download: "wall_s MiB/s curl_cpu nginx_cpu daemon_cpu". With
# CHECK, the body goes through sha256sum and must match the file; timed
# downloads go to /dev/null, because sha256sum on this machine is slower
# than the TLS under test (it bounded the default provider at ~280 MiB/s)
# and takes a core from the daemon.
run() { # MODE SUITE [check]
	local mode=$1 suite=$2 check=${3:-} master args ws c0 n0 d0 t0 t1 got curl_cpu n1 d1 out cmode=$1
	eval "master=\$npid_$mode"
	[ "$CURL_PROVIDER" = match ] || cmode=off
	case $suite in
	tls13) args=(--tlsv1.3 --tls13-ciphers "$TLS13_SUITE") ;;
	tls12) args=(--tlsv1.2 --tls-max 1.2 --ciphers ECDHE-RSA-AES128-GCM-SHA256) ;;
	esac
	mapfile -t ws < <(workers_of "$master")
	n0=$(cpu_of "${ws[@]}") d0=$(cpu_of "$dpid")
	rm -f "$dir/sum"
	out=/dev/null
	[ -z "$check" ] || out=$dir/sum.fifo
	[ -z "$check" ] || { rm -f "$out"; mkfifo "$out"; sha256sum <"$out" >"$dir/sum" & }
	t0=$(date +%s.%N)
	got=$( { OPENSSL_CONF=$dir/$cmode.cnf /usr/bin/time -f 'CPU %U %S' curl -sS \
		--cacert "$dir/cert.pem" "${args[@]}" -o "$out" \
		"https://localhost:${port[$mode]}/f"; } 2>&1)
	t1=$(date +%s.%N)
	n1=$(cpu_of "${ws[@]}") d1=$(cpu_of "$dpid")
	if [ -n "$check" ]; then
		for _ in $(seq 100); do [ -s "$dir/sum" ] && break; sleep 0.1; done
		[ "$(cut -d' ' -f1 "$dir/sum")" = "$want" ] || {
			echo "provider-nginx: $mode $suite: the download's sha256 differs: $got" >&2
			exit 1
		}
	fi
	curl_cpu=$(awk '/^CPU/ { print $2 + $3 }' <<<"$got")
	awk -v a="$t0" -v b="$t1" -v m="$MIB" -v c="$curl_cpu" -v n0="$n0" -v n1="$n1" \
		-v d0="$d0" -v d1="$d1" \
		'BEGIN { printf "%.2f %.0f %.2f %.2f %.2f", b - a, m / (b - a), c, n1 - n0, d1 - d0 }'
}

echo
echo "== $MIB MiB over HTTPS from nginx (2 workers) to curl, $ROUNDS rounds, alternating =="
who="both with cryptod's provider"
[ "$CURL_PROVIDER" = match ] || who="nginx with cryptod's provider, curl without"
echo "(on: $who; off: OpenSSL's default provider alone;"
echo " tls13: $TLS13_SUITE, tls12: ECDHE-RSA-AES128-GCM-SHA256)"
printf '%-6s %5s %-4s %8s %8s %9s %9s %10s\n' suite round prov "wall s" "MiB/s" "curl cpu" \
	"nginx cpu" "daemon cpu"
declare -A all
for suite in tls13 tls12; do
	# One untimed download per server whose body is checked, then timed
	# ones to /dev/null.
	for mode in on off; do run "$mode" "$suite" check >/dev/null; done
	for r in $(seq "$ROUNDS"); do
		order=(on off)
		[ $((r % 2)) = 0 ] && order=(off on)
		for mode in "${order[@]}"; do
			line=$(run "$mode" "$suite")
			read -r w m c n d <<<"$line"
			printf '%-6s %5s %-4s %8s %8s %9s %9s %10s\n' "$suite" "$r" "$mode" "$w" "$m" "$c" "$n" "$d"
			all[$suite.$mode]+="$m "
		done
	done
done
med() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo
echo "== median MiB/s =="
printf '%-6s %8s %8s %8s\n' suite on off "on/off"
for suite in tls13 tls12; do
	# shellcheck disable=SC2086
	on=$(med ${all[$suite.on]}) off=$(med ${all[$suite.off]})
	printf '%-6s %8s %8s %8s\n' "$suite" "$on" "$off" \
		"$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a / b }')"
done
"$CTL" clients --json | python3 -c '
import json, sys
cs = json.load(sys.stdin)["clients"]
print("daemon clients now: " + ", ".join("%s (pid %d, %d MiB)" % (c["name"], c["pid"], c["bytes"] >> 20) for c in cs if c["name"].startswith("openssl/")))'
