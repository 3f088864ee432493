/* SPDX-License-Identifier: MIT */
/* The name table of include/cryptod/algs.h, for the daemon and the
 * library alike (cc_alg_name() and friends are these). */
#include "names.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name, *kname;
	unsigned tag;
} algs[] = {
#define CRD_X(id, num, n, kn, t, ...) [num] = { n, kn, t },
	CRD_ALGORITHMS(CRD_X)
#undef CRD_X
};
_Static_assert(sizeof(algs) / sizeof(algs[0]) == CRD_ALG_MAX_,
	       "algorithm numbers are dense");

const char *crd_alg_name(unsigned alg)
{
	return alg < CRD_ALG_MAX_ ? algs[alg].name : NULL;
}

const char *crd_alg_kernel_name(unsigned alg)
{
	return alg < CRD_ALG_MAX_ ? algs[alg].kname : NULL;
}

int crd_alg_from_name(const char *name, enum crd_name_match how)
{
	int (*eq)(const char *, const char *) =
		how == CRD_NAME_ANY ? strcasecmp : strcmp;
	for (unsigned i = 1; name && i < CRD_ALG_MAX_; i++) {
		if (algs[i].name && !eq(name, algs[i].name))
			return (int)i;
		if (how == CRD_NAME_ANY && algs[i].kname &&
		    !eq(name, algs[i].kname))
			return (int)i;
	}
	return -1;
}

unsigned crd_alg_tag_len(unsigned alg)
{
	return alg < CRD_ALG_MAX_ ? algs[alg].tag : 0;
}

int crd_alg_ossl_name(unsigned alg, unsigned key_len, char *buf, size_t len)
{
	const char *stem = crd_alg_ossl_stem(alg);
	const char *star = stem ? strchr(stem, '*') : NULL;
	unsigned bits =
		key_len * 8 / (crd_alg_flags(alg) & CRD_AF_TWO_KEYS ? 2 : 1);
	int n;

	if (!stem || !len)
		return -ENOENT;
	if (star && bits != 128 && bits != 192 && bits != 256)
		return -EINVAL;
	n = star ? snprintf(buf, len, "%.*s%u%s", (int)(star - stem), stem,
			    bits, star + 1)
		 : snprintf(buf, len, "%s", stem);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

const char *crd_status_text(int status)
{
	switch (status) {
	case CRD_ST_OK:
		return "success";
#define CRD_X(id, val, msg)                                                    \
	case CRD_ST_##id:                                                      \
		return msg;
		CRD_STATUSES(CRD_X)
#undef CRD_X
	}
	return NULL;
}
