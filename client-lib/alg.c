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
_Static_assert(sizeof(struct cc_pk_params) == sizeof(struct crd_pk_params),
	       "cc_pk_params is crd_pk_params");
CC_SAME_FIELD(cc_pk_params, crd_pk_params, pad);
CC_SAME_FIELD(cc_pk_params, crd_pk_params, md);
CC_SAME_FIELD(cc_pk_params, crd_pk_params, mgf1_md);
CC_SAME_FIELD(cc_pk_params, crd_pk_params, reserved0);
CC_SAME_FIELD(cc_pk_params, crd_pk_params, salt_len);
CC_SAME_FIELD(cc_pk_params, crd_pk_params, reserved);
_Static_assert((int)CC_ENCRYPT == CRD_OP_ENCRYPT &&
		       (int)CC_DECRYPT == CRD_OP_DECRYPT &&
		       (int)CC_SIGN == CRD_OP_SIGN &&
		       (int)CC_VERIFY == CRD_OP_VERIFY &&
		       (int)CC_DERIVE == CRD_OP_DERIVE,
	       "cc_dir is crd_op");
_Static_assert((int)CC_PK_PAD_DEFAULT == CRD_PK_PAD_DEFAULT &&
		       (int)CC_PK_PAD_PKCS1 == CRD_PK_PAD_PKCS1 &&
		       (int)CC_PK_PAD_PSS == CRD_PK_PAD_PSS &&
		       (int)CC_PK_PAD_OAEP == CRD_PK_PAD_OAEP &&
		       CC_PK_SALT_DIGEST == CRD_PK_SALT_DIGEST &&
		       CC_PK_SALT_MAX == CRD_PK_SALT_MAX,
	       "cc_pk_pad is crd_pk_pad");
_Static_assert((int)CC_PK_MD_SHA1 == CRD_SHA_1 + 1 &&
		       (int)CC_PK_MD_SHA224 == CRD_SHA_224 + 1 &&
		       (int)CC_PK_MD_SHA256 == CRD_SHA_256 + 1 &&
		       (int)CC_PK_MD_SHA384 == CRD_SHA_384 + 1 &&
		       (int)CC_PK_MD_SHA512 == CRD_SHA_512 + 1,
	       "cc_pk_md is 1 + crd_sha");
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
