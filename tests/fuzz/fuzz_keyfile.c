/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: named-key files (daemon/keys/keyfile.c). The first byte
 * picks the parser: even, the record parser on the rest as an opened
 * record; odd, the whole file as "k.key" under a fixed KEK (header,
 * lengths, tag). A record that parses must hold only what kf_write would
 * write: a valid name, bounded counts, versions strictly increasing, key
 * pointers inside the input. A file that parses must own locked memory,
 * released by kf_record_fini. Nothing may read past the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyfile.h"

static void check(const struct kf_record *r, const uint8_t *lo,
		  const uint8_t *hi)
{
	if (!kf_name_ok(r->name) || !r->key_len ||
	    r->key_len > kf_key_max(r->alg) || r->nuids > KF_MAX_IDS ||
	    r->ngids > KF_MAX_IDS || !r->nversions ||
	    r->nversions > KF_MAX_VERSIONS || !r->usage ||
	    r->usage & ~KF_USE_ALL || r->exportable > 1)
		abort();
	for (unsigned i = 0; i < r->nversions; i++) {
		if (i && r->v[i].version <= r->v[i - 1].version)
			abort();
		if (r->v[i].key < lo || r->v[i].key + r->key_len > hi)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t kek[KF_KEK_LEN] = { [0 ... KF_KEK_LEN - 1] =
							 0x42 };
	struct kf_record r;
	char why[256];

	if (size < 1 || size > KF_FILE_MAX + 1)
		return 0;
	if (!(data[0] & 1)) {
		uint8_t *plain = malloc(size - 1 ? size - 1 : 1);
		if (!plain)
			return 0;
		memcpy(plain, data + 1, size - 1);
		if (kf_record_parse(plain, size - 1, &r, why, sizeof(why)) == 0)
			check(&r, plain, plain + size - 1);
		else if (!why[0])
			abort(); /* a refusal always says why */
		free(plain);
		return 0;
	}
	why[0] = '\0';
	if (kf_parse(data + 1, size - 1, "k.key", kek, &r, why, sizeof(why)) ==
	    0) {
		check(&r, r.secret, r.secret + KF_RECORD_MAX);
		kf_record_fini(&r);
	} else if (!why[0] || r.secret) {
		abort();
	}
	return 0;
}
