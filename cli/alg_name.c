/* SPDX-License-Identifier: MIT */
/*
 * One way to name an algorithm on every command line (encrypt -a, key
 * --alg, bench --alg): our name ("aes-gcm"), the kernel's ("gcm(aes)"),
 * or an AES one with the key size in it as openssl enc spells it
 * ("aes-256-gcm"; "aes-128-xts" is two 128-bit keys). The names are the
 * library's table (cc_alg_from_name), which AES rows take a size the
 * algorithm table's facts (<cryptod/algs.h>).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cryptod/ring_abi.h>

#include "cli.h"

int cli_alg_lookup(const char *name, enum cc_alg *alg, unsigned *key_bits)
{
	static const unsigned sizes[] = { 128, 192, 256 };
	char base[64];
	unsigned bits = 0;

	if (strlen(name) >= sizeof(base))
		return -EINVAL;
	snprintf(base, sizeof(base), "%s", name);
	for (unsigned i = 0; i < 3; i++) {
		char pre[16];

		snprintf(pre, sizeof(pre), "aes-%u-", sizes[i]);
		if (!strncasecmp(name, pre, strlen(pre))) {
			bits = sizes[i];
			snprintf(base, sizeof(base), "aes-%s",
				 name + strlen(pre));
		}
	}
	int n = cc_alg_from_name(base);
	if (n <= 0)
		return -EINVAL;
	unsigned f = crd_alg_flags((unsigned)n);
	const char *stem = crd_alg_ossl_stem((unsigned)n);
	/* A size in the name is one AES key's: the rows whose OpenSSL name
	 * has the key's bits in it ("AES-*-GCM"), not RFC 4106's key and
	 * salt; XTS is two such keys, and there is no XTS-192. */
	int aes = !(f & CRD_AF_SALT) && stem && strchr(stem, '*');
	if (bits && (!aes || ((f & CRD_AF_TWO_KEYS) && bits == 192)))
		return -EINVAL;
	*alg = (enum cc_alg)n;
	*key_bits = f & CRD_AF_TWO_KEYS ? 2 * bits : bits;
	return 0;
}
