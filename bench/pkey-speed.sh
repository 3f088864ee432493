#!/usr/bin/env bash
# Private keys in the daemon against the same keys in-process: signatures
# (and X25519 derives) per second through the provider, and TLS
# handshakes per second against nginx. Prints the machine first.
#
#   bench/pkey-speed.sh [--help] [BUILD_DIR]      (default: build)
#
# Why not `openssl speed -provider cryptod rsa2048`: openssl speed signs
# with its own built-in private keys, which cryptod's key management
# does not import (a program's private keys stay with the provider that
# made them), so that command measures the default provider alone; the
# first section shows it (the daemon counts no op).
#
# 1. bench/pkey_speed (build/bench/pkey_speed, libcrypto only, the
#    provider loaded by OPENSSL_CONF as an unmodified program loads it):
#    each key is made in-process, imported into the daemon (cryptoctl key
#    import), and signed with, a new context per signature as a TLS server
#    does, loaded from its PEM file (the default provider) and from its
#    key-reference file (cryptoctl key ref: cryptod's provider, the key in
#    the daemon); synchronous and with N ASYNC_JOBs on one thread (as
#    openssl speed -async_jobs), rounds alternating which goes first, the
#    median printed and the ratio cryptod/default. Synchronous rows: pkey_speed on CPU 0,
#    the daemon on CPU 1; async rows: the daemon on both CPUs (its
#    workers sign in parallel while the program's thread keeps N
#    signatures in flight). A cryptod figure counts only when the key's
#    op counter in the daemon grew by at least the ops reported; else it
#    is printed as "-" and named.
# 2. nginx (Debian's, 2 workers) with an RSA-2048 and an ECDSA P-256
#    certificate, the key in its PEM file or as a key-reference file (the
#    same key, imported), TLS 1.3 and 1.2: new full handshakes per
#    second from CLIENTS parallel `openssl s_time -new` (nothing pinned),
#    rounds alternating, the median and the ratio; a cryptod figure only
#    when the daemon signed every handshake.
#
# Environment: SECONDS_EACH (per pkey_speed run, default 2), ROUNDS
# (default 3), ALGS (default "rsa2048 rsa2048pss ecdsap256 ed25519
# ecdhx25519"; also rsa3072, ecdsap384), JOBS (default "0 32"; 0 is
# synchronous), WORKERS (the daemon's, default 2), PIN (default 1; 0
# pins nothing), NGINX (default 1; 0 skips section 2), HS_SECONDS
# (default 5), CLIENTS (default 4), SPEED (default 1; 0 skips the openssl
# speed check). Needs openssl, python3, and for section 2 nginx
# (scripts/deps.sh).
set -euo pipefail
case ${1:-} in
-h | --help)
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
	exit 0
	;;
esac
cd "$(dirname "$0")/.."
BUILD=$(realpath "${1:-build}")
SECS=${SECONDS_EACH:-2}
ROUNDS=${ROUNDS:-3}
PIN=${PIN:-1}
WORKERS=${WORKERS:-2}
ALGS=${ALGS:-rsa2048 rsa2048pss ecdsap256 ed25519 ecdhx25519}
JOBS=${JOBS:-0 32}
HS_SECONDS=${HS_SECONDS:-5}
CLIENTS=${CLIENTS:-4}
PKS=$BUILD/bench/pkey_speed
NAME=pkey-speed
[ -x "$PKS" ] || {
	echo "$NAME: build first ($PKS missing)" >&2
	exit 2
}
# The daemon holds named keys: a KEK and a key directory of its own.
kdir=$(mktemp -d)
mkdir -m 0700 "$kdir/creds" "$kdir/keys"
head -c 32 /dev/urandom >"$kdir/creds/kek"
chmod 0400 "$kdir/creds/kek"
export CREDENTIALS_DIRECTORY=$kdir/creds
DAEMON_ARGS=(--set keys.kek=credential:kek --set keys.dir="$kdir/keys")
. bench/provider_lib.sh # the checkout, after the cd above
trap 'kill "$dpid" 2>/dev/null; for p in ${npids[*]:-}; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null; rm -rf "$dir" "$kdir"' EXIT
echo "openssl: $(openssl version)  daemon workers: $WORKERS  pinned: $(pinned)"
echo "load: $(uptime | sed 's/.*load average/load average/')"

# Default alone (off), and default + cryptod (on) as a user's
# OPENSSL_CONF has them (docs/asymmetric.md): the default provider first,
# cryptod offering its ciphers but preferring the default provider's, so
# that only the long-term key's ops go to the daemon.
cat >"$dir/off.cnf" <<EOF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
default = default_sect
[default_sect]
activate = 1
EOF
cat >"$dir/on.cnf" <<EOF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
alg_section = alg_sect
[alg_sect]
default_properties = ?provider=default
[provider_sect]
default = default_sect
cryptod = cryptod_sect
[default_sect]
activate = 1
[cryptod_sect]
activate = 1
module = $BUILD/provider/cryptod.so
socket = $CRYPTOD_SOCKET
algorithms = ciphers
EOF

key_ops() { # NAME: the daemon's op count of the key
	"$CTL" key show "$1" --json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0]["ops"])'
}
daemon_ops() { # every key's ops
	"$CTL" key list --json |
		python3 -c 'import json,sys; print(sum(k["ops"] for k in json.load(sys.stdin)["keys"]))'
}
daemon_cpus() { # CPU list: every thread of the daemon
	taskset -a -p -c "$1" "$dpid" >/dev/null
}
median() { tr ' ' '\n' | grep -v '^-$' | grep . | sort -n |
	awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] : "-" }'; }
ratio() { awk -v c="$1" -v d="$2" 'BEGIN { if (d > 0 && c != "-") printf "%.2f", c / d; else print "-" }'; }

# The keys: made in-process, imported into the daemon, referenced.
key_of() { # ALG -> key name (rsa2048pss signs with rsa2048's key)
	case $1 in rsa2048pss) echo rsa2048 ;; *) echo "$1" ;; esac
}
genkey() { # ALG
	case $1 in
	rsa2048) openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 ;;
	rsa3072) openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:3072 ;;
	ecdsap256) openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 ;;
	ecdsap384) openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 ;;
	ed25519) openssl genpkey -algorithm ED25519 ;;
	ecdhx25519) openssl genpkey -algorithm X25519 ;;
	*)
		echo "$NAME: unknown alg $1" >&2
		exit 2
		;;
	esac
}
need_keys=$(for a in $ALGS; do key_of "$a"; done)
[ "${NGINX:-1}" = 1 ] && need_keys+=" rsa2048 ecdsap256"
for k in $(echo "$need_keys" | tr ' ' '\n' | sort -u); do
	genkey "$k" >"$dir/$k.pem" 2>/dev/null
	"$CTL" key import "$k" --in "$dir/$k.pem" >/dev/null
	"$CTL" key ref "$k" >"$dir/$k.ref"
done

# ---- openssl speed -provider cryptod measures the default provider ----
if [ "${SPEED:-1}" = 1 ]; then
	echo
	echo "== openssl speed -provider default -provider cryptod rsa2048 ecdsap256: ops in the daemon =="
	o0=$(daemon_ops)
	b0=$(dbytes)
	"${pin_c[@]}" openssl speed -seconds 1 -provider-path "$BUILD/provider" \
		-provider default -provider cryptod rsa2048 ecdsap256 2>&1 |
		grep -E '^(rsa|[ ]*256 bits ecdsa) ' | sed 's/^/  /'
	echo "  the daemon: $(($(daemon_ops) - o0)) key ops, $(($(dbytes) - b0)) bytes (its built-in keys stay on the default provider)"
fi

# One pkey_speed run: ops per second, or "-" when a cryptod run's ops did
# not reach the daemon.
speed() { # default|cryptod ALG JOBS
	local key src cnf args=() o0 out ops rate
	key=$(key_of "$2")
	[ "$2" = rsa2048pss ] && args+=(--pss)
	[ "$3" != 0 ] && args+=(--jobs "$3")
	if [ "$1" = cryptod ]; then src=$dir/$key.ref cnf=$dir/on.cnf; else src=$dir/$key.pem cnf=$dir/off.cnf; fi
	[ "$1" = cryptod ] && o0=$(key_ops "$key")
	out=$(OPENSSL_CONF=$cnf "${pin_c[@]}" "$PKS" --seconds "$SECS" "${args[@]}" "$src") || {
		echo "  $2 $1 jobs $3: pkey_speed failed" >&2
		echo -
		return
	}
	read -r _ ops _ _ _ rate <<<"$out"
	if [ "$1" = cryptod ]; then
		local counted=$(($(key_ops "$key") - o0))
		if [ "$counted" -lt "$ops" ]; then
			echo "  $2 jobs $3: the daemon counted $counted of $ops ops: not in the daemon" >&2
			rate=-
		fi
	fi
	echo "$rate"
}

echo
echo "== pkey_speed: ops/s, key in a PEM file (default provider) vs in the daemon (key-reference file), ${SECS} s, median of $ROUNDS =="
printf '%-12s %6s %10s %10s %7s  %s\n' alg jobs default cryptod ratio load
for j in $JOBS; do
	if [ "$j" = 0 ]; then [ ${#pin_d[@]} -gt 0 ] && daemon_cpus 1; else [ ${#pin_d[@]} -gt 0 ] && daemon_cpus 0,1; fi
	for a in $ALGS; do
		d=() c=()
		for r in $(seq "$ROUNDS"); do
			if [ $((r % 2)) = 1 ]; then
				d+=("$(speed default "$a" "$j")")
				c+=("$(speed cryptod "$a" "$j")")
			else
				c+=("$(speed cryptod "$a" "$j")")
				d+=("$(speed default "$a" "$j")")
			fi
		done
		dm=$(echo "${d[*]}" | median)
		cm=$(echo "${c[*]}" | median)
		printf '%-12s %6s %10s %10s %7s  %s\n' "$a" \
			"$([ "$j" = 0 ] && echo sync || echo "$j")" "$dm" "$cm" \
			"$(ratio "$cm" "$dm")" "$(cut -d' ' -f1 /proc/loadavg)"
	done
done
[ ${#pin_d[@]} -gt 0 ] && daemon_cpus 1

# ---- nginx: handshakes per second ----
[ "${NGINX:-1}" = 1 ] || exit 0
NGINX_BIN=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX_BIN" ] || {
	echo "$NAME: no nginx: section 2 skipped (scripts/deps.sh)" >&2
	exit 0
}
daemon_cpus 0-$(($(nproc) - 1))
for k in rsa2048 ecdsap256; do
	openssl req -x509 -new -key "$dir/$k.pem" -subj /CN=localhost -days 1 \
		-out "$dir/$k.crt" 2>/dev/null
done
free_port() {
	local p
	for ((p = 20000 + RANDOM % 20000; ; p++)); do
		python3 -c "import socket; socket.socket().bind(('127.0.0.1', $p))" 2>/dev/null &&
			{ echo $p; return; }
	done
}
declare -A port
npids=()
chmod 755 "$dir"
for mode in pem ref; do
	user_line=
	[ "$(id -u)" = 0 ] && user_line="user root root;"
	mkdir -p "$dir/$mode/tmp"
	servers=
	for k in rsa2048 ecdsap256; do
		port[$mode.$k]=$(free_port)
		servers+="
	server {
		listen 127.0.0.1:${port[$mode.$k]} ssl;
		ssl_certificate $dir/$k.crt;
		ssl_certificate_key $dir/$k.$mode;
		ssl_protocols TLSv1.2 TLSv1.3;
		ssl_session_cache off;
		ssl_session_tickets off;
	}"
	done
	cat >"$dir/$mode/nginx.conf" <<EOF
worker_processes 2;
$user_line
pid $dir/$mode/nginx.pid;
error_log $dir/$mode/error.log warn;
env OPENSSL_CONF;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $dir/$mode/tmp/body;
	proxy_temp_path $dir/$mode/tmp/proxy;
	fastcgi_temp_path $dir/$mode/tmp/fastcgi;
	uwsgi_temp_path $dir/$mode/tmp/uwsgi;
	scgi_temp_path $dir/$mode/tmp/scgi;
	$servers
}
EOF
	cnf=$dir/off.cnf
	[ "$mode" = ref ] && cnf=$dir/on.cnf
	OPENSSL_CONF=$cnf "$NGINX_BIN" -p "$dir/$mode" -c "$dir/$mode/nginx.conf" \
		-e "$dir/$mode/error.log" -g 'daemon off;' >"$dir/$mode/out" 2>&1 &
	npids+=($!)
done
for p in "${port[@]}"; do
	for _ in $(seq 100); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $p), 1)" \
			2>/dev/null && break
		sleep 0.1
	done
done
echo "$("$NGINX_BIN" -v 2>&1 | sed 's/.*: //'), 2 workers; $CLIENTS x openssl s_time -new, ${HS_SECONDS} s; nothing pinned"

# One measurement: handshakes per second, or "-" when a ref run's
# handshakes were not signed in the daemon.
hs() { # pem|ref KEY tls13|tls12
	local v=-tls1_3 o0 n t0 t1 rate i
	[ "$3" = tls12 ] && v=-tls1_2
	[ "$1" = ref ] && o0=$(key_ops "$2")
	t0=$(date +%s.%N)
	for i in $(seq "$CLIENTS"); do
		OPENSSL_CONF=$dir/off.cnf openssl s_time -connect "127.0.0.1:${port[$1.$2]}" \
			-new "$v" -time "$HS_SECONDS" >"$dir/st.$i" 2>&1 &
	done
	wait # the clients: this runs in a subshell, their parent
	t1=$(date +%s.%N)
	n=$(cat "$dir"/st.* | awk '/connections in .* real seconds/ { n += $1 } END { print n + 0 }')
	rm -f "$dir"/st.*
	rate=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')
	if [ "$1" = ref ]; then
		local signed=$(($(key_ops "$2") - o0))
		if [ "$signed" -lt "$n" ] || [ "$n" = 0 ]; then
			echo "  nginx $2 $3: the daemon signed $signed of $n handshakes" >&2
			rate=-
		fi
	fi
	[ "$n" = 0 ] && rate=-
	echo "$rate"
}
echo
echo "== nginx: new TLS handshakes/s, key in a PEM file vs a key-reference file (the daemon), median of $ROUNDS =="
printf '%-10s %-6s %8s %8s %7s  %s\n' cert tls pem ref ratio load
for k in rsa2048 ecdsap256; do
	for v in tls13 tls12; do
		p=() q=()
		for r in $(seq "$ROUNDS"); do
			if [ $((r % 2)) = 1 ]; then
				p+=("$(hs pem "$k" "$v")")
				q+=("$(hs ref "$k" "$v")")
			else
				q+=("$(hs ref "$k" "$v")")
				p+=("$(hs pem "$k" "$v")")
			fi
		done
		pm=$(echo "${p[*]}" | median)
		qm=$(echo "${q[*]}" | median)
		printf '%-10s %-6s %8s %8s %7s  %s\n' "$k" "$v" "$pm" "$qm" \
			"$(ratio "$qm" "$pm")" "$(cut -d' ' -f1 /proc/loadavg)"
	done
done
