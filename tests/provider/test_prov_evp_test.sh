#!/usr/bin/env bash
# OpenSSL's own evp_test over its own data files (evpciph_*, evpmac_*,
# evpmd_*.txt) through the provider, against a private daemon: every
# file once, then all of them in 4 evp_test processes at once. The
# configuration prefers cryptod (?provider=cryptod, fallback = fail), with
# the default and legacy providers for what cryptod has not, as OpenSSL's
# test_evp runs evp_test (default-and-legacy.cnf). The daemon's byte count
# must grow: a run that never reached it proves nothing.
#
# Neither is in Debian's packages (docs/provider.md says how to build
# them): skipped unless OPENSSL_EVP_TEST is the evp_test binary and
# OPENSSL_EVP_DATA its test/recipes/30-test_evp_data directory.
#   test_prov_evp_test.sh CRYPTOD_BIN PROVIDER_DIR CRYPTOCTL [SANITIZE]
set -uo pipefail
daemon=$1 provdir=$2 ctl=$3 sanitize=${4:-}
. "$(dirname "$0")/prov_lib.sh"
evp_test=${OPENSSL_EVP_TEST:-} data=${OPENSSL_EVP_DATA:-}
if [ -z "$evp_test" ] || [ -z "$data" ]; then
	echo "SKIP: set OPENSSL_EVP_TEST (evp_test) and OPENSSL_EVP_DATA" \
		"(its 30-test_evp_data directory)"
	exit 77
fi
[ -x "$evp_test" ] || { echo "FAIL: OPENSSL_EVP_TEST: no $evp_test"; exit 1; }
prov_need_unsanitized "$sanitize"
prov_need openssl python3
shopt -s nullglob
files=("$data"/evpciph_*.txt "$data"/evpmac_*.txt "$data"/evpmd_*.txt)
[ ${#files[@]} -gt 0 ] || { echo "FAIL: no evp*.txt in $data"; exit 1; }
prov_tmp evp_test
export CRYPTOD_SOCKET=$tmp/cryptod.sock
prov_daemon_start "$CRYPTOD_SOCKET"

# The legacy provider (Blowfish, CAST5, DES, RC2, RC4, SEED, ...) where
# this OpenSSL has it; without it those files fail as "unknown cipher".
legacy=()
openssl list -providers -provider legacy >/dev/null 2>&1 &&
	legacy=("legacy = legacy_sect" "[legacy_sect]" "activate = 1")
{
	printf '%s\n' "openssl_conf = openssl_init" "[openssl_init]" \
		"providers = provider_sect" "alg_section = alg_sect" \
		"random = random_sect" "[alg_sect]" \
		"default_properties = ?provider=cryptod" "[random_sect]" \
		"properties = provider=default" "[provider_sect]" \
		"default = default_sect" "cryptod = cryptod_sect" \
		"${legacy[@]}" "[default_sect]" "activate = 1" \
		"[cryptod_sect]" "module = $provdir/cryptod.so" "activate = 1" \
		"socket = $CRYPTOD_SOCKET" "fallback = fail" "min_size = 0"
} >"$tmp/evp.cnf"

# run LOG FILE: evp_test over FILE; its status.
run() {
	"$evp_test" -config "$tmp/evp.cnf" "$2" >"$1" 2>&1
}

before=$(daemon_bytes)
total=0 errors=0 skipped=0
for f in "${files[@]}"; do
	n=${f##*/}
	run "$tmp/$n.log" "$f"
	st=$?
	# "Completed 164 tests with 0 errors and 1 skipped"
	sum=$(grep -o 'Completed [0-9]* tests with [0-9]* errors and [0-9]* skipped' \
		"$tmp/$n.log" | tail -1)
	echo "$n: ${sum:-no summary} (status $st)"
	read -r t e s < <(echo "$sum" | awk '{print $2, $5, $8}')
	total=$((total + ${t:-0})) errors=$((errors + ${e:-0}))
	skipped=$((skipped + ${s:-0}))
	if [ "$st" -ne 0 ] || [ -z "$sum" ]; then
		grep -E 'ERROR|Source of above|error:' "$tmp/$n.log" | head -20
		bad "$n"
	fi
done
echo "evp_test: $total stanzas, $errors failed, $skipped skipped," \
	"${#files[@]} files"
after=$(daemon_bytes)
echo "daemon: $((after - before)) bytes"
[ "$after" -gt "$before" ] || bad "the daemon served no bytes"

# Four at once against the same daemon, each over every file.
pids=()
for i in 1 2 3 4; do
	(
		for f in "${files[@]}"; do
			run "$tmp/p$i.${f##*/}.log" "$f" ||
				echo "${f##*/}" >>"$tmp/p$i.failed"
		done
	) &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p"
done
for i in 1 2 3 4; do
	[ -s "$tmp/p$i.failed" ] &&
		bad "process $i of 4: $(tr '\n' ' ' <"$tmp/p$i.failed")"
done
last=$(daemon_bytes)
echo "4 at once: $((last - after)) bytes on the daemon"
[ "$last" -gt "$after" ] || bad "4 at once: the daemon served no bytes"
prov_end
