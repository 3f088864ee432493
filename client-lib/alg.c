/* SPDX-License-Identifier: MIT */
/* Algorithm names and facts, from the ring ABI's table; no daemon asked.
 * Below every file that needs one (conn.c, queue.c, caps.c). */
#include "internal.h"

#include "names.h"

#include <errno.h>
#include <stddef.h>

/* The public types mirror the ring ABI (the library hands the caller's
 * cc_sessionless and cc_sgl_entry to the daemon as they are). */
#define CC_X(id, num, ...)                                                     \
	_Static_assert((int)CC_ALG_##id == (int)CRD_ALG_##id,                  \
		       "cc_alg " #id " is the ABI's");
CRD_ALGORITHMS(CC_X)
#undef CC_X
#define CC_X(id, val, msg)                                                     \
	_Static_assert((int)CC_ERR_##id == (int)CRD_ST_##id,                   \
		       "cc_status " #id " is the ABI's");
CRD_STATUSES(CC_X)
#undef CC_X
_Static_assert(sizeof(struct cc_sessionless) == sizeof(struct crd_sessionless),
	       "cc_sessionless is crd_sessionless");
#define CC_SAME_FIELD(a, b, f)                                                 \
	_Static_assert(offsetof(struct a, f) == offsetof(struct b, f) &&       \
			       sizeof(((struct a *)0)->f) ==                   \
				       sizeof(((struct b *)0)->f),             \
		       #a "." #f " is " #b "." #f)
CC_SAME_FIELD(cc_sessionless, crd_sessionless, alg);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, key_len);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, auth_key_len);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, tag_len);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, reserved);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, key);
CC_SAME_FIELD(cc_sessionless, crd_sessionless, auth_key);
_Static_assert(sizeof(struct cc_sgl_entry) == sizeof(struct crd_seg),
	       "cc_sgl_entry is crd_seg");
CC_SAME_FIELD(cc_sgl_entry, crd_seg, off);
CC_SAME_FIELD(cc_sgl_entry, crd_seg, len);
_Static_assert(CC_IV_INLINE == CRD_IV_MAX && CC_IV_MAX == CRD_IV_ARENA_MAX,
	       "the public IV bounds are the ring ABI's");

const char *cc_alg_name(enum cc_alg alg)
{
	return crd_alg_name((unsigned)alg);
}

int cc_alg_from_name(const char *name)
{
	int alg = crd_alg_from_name(name, CRD_NAME_ANY);
	return alg > 0 ? alg : -EINVAL;
}

unsigned cc_alg_tag_len(enum cc_alg alg)
{
	return crd_alg_tag_len((unsigned)alg);
}

_Static_assert((int)CC_KIND_NONE == (int)CRD_KIND_NONE &&
		       (int)CC_KIND_AEAD == (int)CRD_KIND_AEAD &&
		       (int)CC_KIND_CIPHER == (int)CRD_KIND_CIPHER &&
		       (int)CC_KIND_AUTHENC == (int)CRD_KIND_AUTHENC &&
		       (int)CC_KIND_MAC == (int)CRD_KIND_MAC &&
		       (int)CC_KIND_HASH == (int)CRD_KIND_HASH &&
		       (int)CC_KIND_PKEY == (int)CRD_KIND_PKEY,
	       "cc_alg_kind is the ABI's");

enum cc_alg_kind cc_alg_kind(enum cc_alg alg)
{
	return (enum cc_alg_kind)crd_alg_kind((unsigned)alg);
}

const char *cc_alg_kind_name(enum cc_alg_kind kind)
{
	static const char *const names[] = {
		[CC_KIND_NONE] = "none",     [CC_KIND_AEAD] = "aead",
		[CC_KIND_CIPHER] = "cipher", [CC_KIND_AUTHENC] = "authenc",
		[CC_KIND_MAC] = "mac",	     [CC_KIND_HASH] = "hash",
		[CC_KIND_PKEY] = "pkey",
	};
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind]
								 : "none";
}
