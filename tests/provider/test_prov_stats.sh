#!/usr/bin/env bash
# openssl enc through the provider, configured from an openssl.cnf section
# with fallback = default-provider and min_size, shows up in 'cryptoctl
# stats --json' as program "openssl/openssl" with the right offloaded,
# fallback and in-process counts, also after each process is gone; a
# fallback = fail run that is refused counts no fallback. Every output is
# compared with the default provider's.
#   test_prov_stats.sh CRYPTOD_BIN PROVIDER_DIR CRYPTOCTL [SANITIZE]
set -uo pipefail
daemon=$1 provdir=$2 ctl=$3 sanitize=${4:-}
. "$(dirname "$0")/prov_lib.sh"
prov_need_unsanitized "$sanitize"
prov_need openssl
prov_tmp stats
sock=$tmp/cryptod.sock
# AES-128 keys are below this key policy: the daemon refuses them, and
# fallback = default-provider runs them on the default provider.
prov_daemon_start "$sock" --set keys.min_bits=256

cnf() # FILE FALLBACK
{
	prov_cnf "$1" "socket = $sock" "fallback = $2" "min_size = 4096"
}
cnf "$tmp/fb.cnf" default-provider
cnf "$tmp/fail.cnf" fail

K32=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
IV=f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff
head -c 100000 /dev/urandom >"$tmp/big"
head -c 100 /dev/urandom >"$tmp/small"

# enc CNF CIPHER KEY FILE: through the provider, compared with the default
# provider alone. Exit status of the provider's run.
enc()
{
	openssl enc -"$2" -K "$3" -iv "$IV" -in "$4" -out "$tmp/ref" ||
		{ bad "$2 ${4##*/}: reference"; return 1; }
	OPENSSL_CONF=$1 openssl enc -"$2" -K "$3" -iv "$IV" -in "$4" \
		-out "$tmp/got" -propquery provider=cryptod 2>"$tmp/err" || return 1
	cmp -s "$tmp/ref" "$tmp/got" || bad "$2 ${4##*/}: ciphertext differs"
	return 0
}

# program: "connections connections_total offloaded fallbacks inprocess
# ops" of openssl/openssl (this uid), or "none".
program()
{
	"$ctl" --socket "$sock" stats --json | python3 -c '
import json, os, sys
p = [p for p in json.load(sys.stdin)["programs"]
     if p["name"] == "openssl/openssl" and p["uid"] == os.geteuid()]
if not p:
    print("none")
else:
    p = p[0]
    print(p["connections"], p["connections_total"], p["offloaded"],
          p["fallbacks"], p["inprocess"], p["ops"])'
}

[ "$(program)" = none ] || bad "a program before any openssl ran: $(program)"

enc "$tmp/fb.cnf" aes-256-ctr "$K32" "$tmp/big" || { cat "$tmp/err"; bad "offloaded run failed"; }
read -r conns total off fb inproc ops <<<"$(program)"
[ "$conns $total $off $fb $inproc" = "0 1 1 0 0" ] || bad "after an offloaded run: $(program), want 0 1 1 0 0 OPS"
[ "${ops:-0}" -gt 0 ] || bad "after an offloaded run: no ops on its queues"

enc "$tmp/fb.cnf" aes-128-ctr "${K32:0:32}" "$tmp/big" || { cat "$tmp/err"; bad "fallback run failed"; }
read -r conns total off fb inproc ops2 <<<"$(program)"
[ "$conns $total $off $fb $inproc" = "0 2 1 1 0" ] || bad "after a fallback: $(program), want 0 2 1 1 0 OPS"
[ "${ops2:-0}" -eq "${ops:-0}" ] || bad "a fallback ran ops on the daemon ($ops -> $ops2)"

enc "$tmp/fb.cnf" aes-256-ctr "$K32" "$tmp/small" || { cat "$tmp/err"; bad "in-process run failed"; }
[ "$(program)" = "0 3 1 1 1 $ops" ] || bad "after an in-process run: $(program), want 0 3 1 1 1 $ops"

# fallback = fail: the refused key fails the run, and nothing is counted
# as a fallback (the connection still counts).
if enc "$tmp/fail.cnf" aes-128-ctr "${K32:0:32}" "$tmp/big"; then
	bad "fallback = fail ran a key the daemon refuses"
fi
grep -q "cryptod" "$tmp/err" || bad "fallback = fail: the error does not name cryptod: $(cat "$tmp/err")"
[ "$(program)" = "0 4 1 1 1 $ops" ] || bad "after a refused run: $(program), want 0 4 1 1 1 $ops"

# The table and the Prometheus families show it too.
"$ctl" --socket "$sock" stats >"$tmp/stats.txt"
grep -Eq "^openssl/openssl +$(id -u)\\($(id -un)\\) +0 +0 +$ops +[0-9.]+[KMGTPE]? +0 +1 +1 +1$" "$tmp/stats.txt" ||
	bad "stats table: no openssl/openssl row with 1 1 1: $(grep openssl "$tmp/stats.txt")"
"$ctl" --socket "$sock" stats --prometheus >"$tmp/prom"
grep -Fqx "cryptod_program_fallbacks_total{program=\"openssl/openssl\",uid=\"$(id -u)\"} 1" "$tmp/prom" ||
	bad "prometheus: no fallbacks sample for openssl/openssl"

prov_end
