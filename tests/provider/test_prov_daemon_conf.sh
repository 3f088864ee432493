#!/usr/bin/env bash
# The daemon's own OpenSSL never routes to cryptod's provider: with an
# OPENSSL_CONF that prefers cryptod (the installed TLS example) in its
# environment, the daemon must still have its aesni engine (which needs
# OpenSSL's CCM, HMAC and CMAC) and serve ops, rather than send its own
# work to itself and hang.
#   test_prov_daemon_conf.sh CRYPTOD_BIN PROVIDER_DIR CRYPTOCTL SRC_DIR [SANITIZE]
# With SANITIZE set (a sanitizer build), the provider cannot load into
# Debian's openssl: the offload checks at the end are left out.
set -uo pipefail
daemon=$1 provdir=$(realpath "$2") ctl=$3 src=$4 sanitize=${5:-}
. "$(dirname "$0")/prov_lib.sh"
prov_tmp dconf
export CRYPTOD_SOCKET=$tmp/s.sock
OPENSSL_CONF=$src/provider/cryptod-provider-tls.cnf OPENSSL_MODULES=$provdir \
	"$daemon" --no-config --socket "$tmp/s.sock" --log-level warn 2>"$tmp/d.log" &
dpid=$!
for _ in $(seq 100); do "$ctl" ping >/dev/null 2>&1 && break; sleep 0.05; done
grep -q "engine aesni unavailable" "$tmp/d.log" && bad "aesni unavailable: $(cat "$tmp/d.log")"
"$ctl" engines --json >"$tmp/eng.json" 2>&1
python3 - "$tmp/eng.json" <<'PY' || bad "aes-gcm is not on aesni: $(head -c 600 "$tmp/eng.json")"
import json, sys
rows = json.load(open(sys.argv[1]))["algorithms"]
sys.exit(0 if any(r["alg"] == "aes-gcm" and r["engine"] == "aesni" and
                  r["available"] and r["default"] for r in rows) else 1)
PY
key=000102030405060708090a0b0c0d0e0f iv=f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff
head -c 100003 /dev/urandom >"$tmp/m"
timeout 20 "$ctl" encrypt -a aes-128-ctr -k $key -i $iv --in "$tmp/m" >"$tmp/a" || bad "encrypt failed"
OPENSSL_CONF=/dev/null openssl enc -aes-128-ctr -K $key -iv $iv -in "$tmp/m" -out "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || bad "aes-128-ctr differs from openssl enc"
timeout 20 "$ctl" encrypt -a aes-128-gcm -k $key -i 000102030405060708090a0b --in "$tmp/m" >/dev/null ||
	bad "aes-128-gcm failed"

if [ -n "$sanitize" ]; then
	echo "offload checks skipped: provider built with -fsanitize=$sanitize"
	prov_end
fi
# The shipped configurations offload with nothing on the command line:
# OPENSSL_CONF alone, and the daemon's byte counters move by the file.
bytes() {
	"$ctl" stats --json | python3 -c 'import json, sys
print(sum(e["bytes"] for e in json.load(sys.stdin)["engines"]))'
}
offloads() { # what, config, command...
	local what=$1 conf=$2 b0 b1
	shift 2
	b0=$(bytes)
	OPENSSL_CONF=$conf OPENSSL_MODULES=$provdir timeout 20 "$@" ||
		bad "$what: failed"
	b1=$(bytes)
	[ $((b1 - b0)) -ge 100003 ] ||
		bad "$what: not offloaded ($((b1 - b0)) bytes reached the daemon)"
}
gen=$src/provider/cryptod-provider.cnf tls=$src/provider/cryptod-provider-tls.cnf
offloads "cryptod-provider.cnf: openssl enc" "$gen" \
	openssl enc -aes-128-ctr -K $key -iv $iv -in "$tmp/m" -out "$tmp/c"
cmp -s "$tmp/c" "$tmp/b" || bad "cryptod-provider.cnf: enc output differs"
offloads "cryptod-provider.cnf: openssl dgst" "$gen" \
	openssl dgst -sha256 -out "$tmp/dg" "$tmp/m"
grep -q "$(sha256sum <"$tmp/m" | cut -c1-64)" "$tmp/dg" ||
	bad "cryptod-provider.cnf: digest differs from sha256sum"
offloads "cryptod-provider-tls.cnf: openssl enc" "$tls" \
	openssl enc -aes-128-cbc -K $key -iv $iv -in "$tmp/m" -out "$tmp/c"
OPENSSL_CONF=/dev/null openssl enc -aes-128-cbc -K $key -iv $iv -in "$tmp/m" \
	-out "$tmp/b2"
cmp -s "$tmp/c" "$tmp/b2" || bad "cryptod-provider-tls.cnf: enc output differs"

prov_end
