#!/usr/bin/env bash
# The provider's algorithms = key (and $CRYPTOD_PROVIDER_ALGORITHMS):
# it offers exactly the operations listed, all of them by default, and
# a word it does not know makes the provider refuse to load, naming the
# key. No daemon is needed: nothing is run, only fetched and listed.
#   test_prov_routing.sh PROVIDER_DIR SRC_DIR [SANITIZE]
set -uo pipefail
provdir=$1 src=$2 sanitize=${3:-}
. "$(dirname "$0")/prov_lib.sh"
prov_need_unsanitized "$sanitize"
prov_need openssl
prov_tmp routing
export OPENSSL_MODULES=$provdir
unset CRYPTOD_PROVIDER_ALGORITHMS

# How many of cryptod's ciphers, digests and MACs openssl lists.
count() { # kind (cipher|digest|mac) [openssl list options...]
	local kind=$1
	shift
	openssl list "$@" -"$kind"-algorithms 2>/dev/null | grep -c "@ cryptod"
}
P=(-provider cryptod)
check() { # what, ciphers, digests, macs, options...
	local what=$1 nc=$2 nd=$3 nm=$4
	shift 4
	local c d m
	c=$(count cipher "$@") d=$(count digest "$@") m=$(count mac "$@")
	[ "$c/$d/$m" = "$nc/$nd/$nm" ] || bad "$what: cryptod lists $c ciphers, $d digests, $m MACs; want $nc/$nd/$nm"
}

all_c=$(count cipher "${P[@]}") all_d=$(count digest "${P[@]}") all_m=$(count mac "${P[@]}")
[ "$all_c" -gt 10 ] && [ "$all_d" -ge 5 ] && [ "$all_m" -ge 2 ] ||
	bad "default: $all_c ciphers, $all_d digests, $all_m MACs"

CRYPTOD_PROVIDER_ALGORITHMS=ciphers check "env ciphers" "$all_c" 0 0 "${P[@]}"
CRYPTOD_PROVIDER_ALGORITHMS="digests, macs" check "env digests, macs" 0 "$all_d" "$all_m" "${P[@]}"
CRYPTOD_PROVIDER_ALGORITHMS=MACS check "env MACS" 0 0 "$all_m" "${P[@]}"
CRYPTOD_PROVIDER_ALGORITHMS=all check "env all" "$all_c" "$all_d" "$all_m" "${P[@]}"

# From a config section, which wins over the environment.
cnf() { # file, algorithms value
	cat >"$1" <<CNF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
default = default_sect
cryptod = cryptod_sect
[default_sect]
activate = 1
[cryptod_sect]
activate = 1
algorithms = $2
CNF
}
cnf "$tmp/d.cnf" "digests"
CRYPTOD_PROVIDER_ALGORITHMS=ciphers OPENSSL_CONF=$tmp/d.cnf check "cnf digests" 0 "$all_d" 0

# The installed TLS example: ciphers only.
OPENSSL_CONF=$src/provider/cryptod-provider-tls.cnf check "cryptod-provider-tls.cnf" "$all_c" 0 0

# Words it does not know: the provider does not load, and says why.
for v in bogus "ciphers,bogus" "," "cipher"; do
	out=$(CRYPTOD_PROVIDER_ALGORITHMS=$v openssl list "${P[@]}" -cipher-algorithms 2>&1)
	n=$(grep -c "@ cryptod" <<<"$out")
	[ "$n" = 0 ] || bad "algorithms = '$v': the provider loaded ($n ciphers)"
	grep -q "algorithms = $v: expected" <<<"$out" || bad "algorithms = '$v': no error naming the key: $out"
done

prov_end
