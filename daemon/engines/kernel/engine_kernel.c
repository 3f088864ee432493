/* SPDX-License-Identifier: MIT */
/*
 * kernel and kernel-pcrypt: the Linux kernel crypto API through AF_ALG
 * sockets, by way of libkcapi.
 *
 * A session is one AF_ALG transform (the tfm socket, which holds the key
 * inside the kernel) bound by driver name, so "kernel" never lands on a
 * pcrypt instance by priority and "kernel-pcrypt" always does. Each worker
 * gets its own operation socket on that transform the first time it runs
 * one of the session's ops (kcapi_handle_reinit): workers never share a
 * socket, so with N workers N requests are in flight, which is what lets
 * pcrypt spread them over its CPUs.
 *
 * Data is copied into a per-worker scratch buffer (AAD || data || tag, the
 * layout AF_ALG wants) and the result copied out: the kernel never reads
 * the client's shared memory, so a client rewriting it meanwhile can only
 * spoil its own result, and a failed tag check leaves nothing behind. The
 * scratch is wiped after every op.
 *
 * Ops are limited to KERN_MAX_LEN bytes (libkcapi's one-shot AEAD limit,
 * 16 pages): AEAD and XTS/LRW cannot be split across socket calls.
 */
#include "bounds.h"
#include "engine.h"
#include "kernel.h"
#include "session.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <kcapi.h>

const struct kern_alg kern_algs[CRD_ALG_MAX_] = {
	[CRD_ALG_AES_GCM] = { "gcm(aes)", 1 },
	[CRD_ALG_AES_GMAC] = { "gcm(aes)", 1 },
	[CRD_ALG_AES_CBC] = { "cbc(aes)", 0 },
	[CRD_ALG_AES_CTR] = { "ctr(aes)", 0 },
	[CRD_ALG_AES_ECB] = { "ecb(aes)", 0 },
	[CRD_ALG_AES_XTS] = { "xts(aes)", 0 },
	[CRD_ALG_AES_LRW] = { "lrw(aes)", 0 },
	[CRD_ALG_AES_CBC_HMAC_SHA1] = { "authenc(hmac(sha1),cbc(aes))", 1 },
	[CRD_ALG_AES_CBC_HMAC_SHA256] = { "authenc(hmac(sha256),cbc(aes))", 1 },
	[CRD_ALG_AES_CBC_NULL] = { "cbc(aes)", 0 },
	[CRD_ALG_AES_GCM_RFC4106] = { "rfc4106(gcm(aes))", 1 },
	[CRD_ALG_AES_CBC_HMAC_SHA384] = { "authenc(hmac(sha384),cbc(aes))", 1 },
	[CRD_ALG_AES_CBC_HMAC_SHA512] = { "authenc(hmac(sha512),cbc(aes))", 1 },
	[CRD_ALG_AES_CTR_HMAC_SHA1] = { "authenc(hmac(sha1),ctr(aes))", 1 },
	[CRD_ALG_AES_CTR_HMAC_SHA256] = { "authenc(hmac(sha256),ctr(aes))", 1 },
};

#define KCAP_TAIL(min_, blk_)                                                  \
	.min_len = (min_), .max_len = KERN_MAX_LEN, .block = (blk_)
#define KCAP_MODE(a, iv_, blk_)                                                \
	{                                                                      \
		.alg = (a), KEYS_AES, CAP_IVS(iv_, iv_), NO_TAG,               \
		.aad = RANGE1(0), KCAP_TAIL(0, blk_)                           \
	}
/* gcm(aes) takes 12-byte IVs only (crypto/gcm.c: GCM_AES_IV_SIZE): the
 * longer ones aesni and openssl take are refused here, as the row says. */
#define KCAP_GCM(a, aad_max)                                                   \
	{                                                                      \
		.alg = (a), KEYS_AES, CAP_IVS(12, 12), GCM_TAGS,               \
		.aad = { 0, (aad_max), (aad_max) ? 1 : 0 }, KCAP_TAIL(0, 1)    \
	}
#define KCAP_AUTHENC(id, blk_)                                                 \
	{                                                                      \
		.alg = CRD_ALG_##id, KEYS_AES, .n_auth_key = 1,                \
		.auth_key = { { 1, 64, 1 } }, .n_iv = 1, .iv = { RANGE1(16) }, \
		.n_tag = 1, .tag = { RANGE1(CRD_TAG_##id) },                   \
		.aad = { 0, CRD_AAD_MAX, 1 }, KCAP_TAIL(0, blk_)               \
	}

static const struct alg_cap kern_caps[] = {
	KCAP_GCM(CRD_ALG_AES_GCM, CRD_AAD_MAX),
	KCAP_GCM(CRD_ALG_AES_GMAC, 0),
	KCAP_MODE(CRD_ALG_AES_CBC, 16, 16),
	KCAP_MODE(CRD_ALG_AES_CTR, 16, 1),
	KCAP_MODE(CRD_ALG_AES_ECB, 0, 16),
	{ .alg = CRD_ALG_AES_XTS,
	  .n_key = 2,
	  .key = { RANGE1(32), RANGE1(64) },
	  CAP_IVS(16, 16),
	  NO_TAG,
	  .aad = RANGE1(0),
	  KCAP_TAIL(16, 1) },
	/* lrw(aes): an AES key followed by the 16-byte tweak key */
	{ .alg = CRD_ALG_AES_LRW,
	  .n_key = 1,
	  .key = { { 32, 48, 8 } },
	  CAP_IVS(16, 16),
	  NO_TAG,
	  .aad = RANGE1(0),
	  KCAP_TAIL(16, 16) },
	KCAP_AUTHENC(AES_CBC_HMAC_SHA1, 16),
	KCAP_AUTHENC(AES_CBC_HMAC_SHA256, 16),
	KCAP_AUTHENC(AES_CBC_HMAC_SHA384, 16),
	KCAP_AUTHENC(AES_CBC_HMAC_SHA512, 16),
	KCAP_AUTHENC(AES_CTR_HMAC_SHA1, 1),
	KCAP_AUTHENC(AES_CTR_HMAC_SHA256, 1),
	{ .alg = CRD_ALG_AES_CBC_NULL,
	  KEYS_AES,
	  CAP_IVS(16, 16),
	  NO_TAG,
	  .aad = { 0, CRD_AAD_MAX, 1 },
	  KCAP_TAIL(0, 16) },
	CAP_AES_GCM_RFC4106(KERN_MAX_LEN),
};

/* pcrypt parallelises AEAD requests only. */
static const struct alg_cap kern_pcrypt_caps[] = {
	KCAP_GCM(CRD_ALG_AES_GCM, CRD_AAD_MAX),
	KCAP_GCM(CRD_ALG_AES_GMAC, 0),
	KCAP_AUTHENC(AES_CBC_HMAC_SHA1, 16),
	KCAP_AUTHENC(AES_CBC_HMAC_SHA256, 16),
	CAP_AES_GCM_RFC4106(KERN_MAX_LEN),
};

static struct kern_state kern_plain_state, kern_pcrypt_state;

/* The session's engine-private part: lives in its locked key slot. */
struct kern_sess {
	struct kcapi_handle *tfm;	      /* owns the transform */
	struct kcapi_handle *op[MAX_WORKERS]; /* one op socket per worker */
	int aead;
};
_Static_assert(sizeof(struct kern_sess) <= sizeof(((struct session *)0)->key),
	       "kernel session state fits the slot");

struct kern_worker {
	unsigned id;
	uint8_t *in, *out; /* KERN_SCRATCH each, one mapping */
};

int kern_handle_init(struct kcapi_handle **h, int aead, const char *name)
{
	return aead ? kcapi_aead_init(h, name, 0)
		    : kcapi_cipher_init(h, name, 0);
}

size_t kern_authenc_blob(uint8_t *blob, const uint8_t *auth_key,
			 size_t auth_key_len, const uint8_t *key,
			 size_t key_len)
{
	uint16_t rta[2] = { 8, 1 };
	uint32_t enclen = htonl((uint32_t)key_len);
	memcpy(blob, rta, 4);
	memcpy(blob + 4, &enclen, 4);
	memcpy(blob + 8, auth_key, auth_key_len);
	memcpy(blob + 8 + auth_key_len, key, key_len);
	return 8 + auth_key_len + key_len;
}

/* ---- sessions ---- */

static void kern_session_fini(struct session *s)
{
	struct kern_sess *ks = (struct kern_sess *)s->key;
	for (unsigned i = 0; i < MAX_WORKERS; i++)
		if (ks->op[i])
			kcapi_cipher_destroy(ks->op[i]);
	if (ks->tfm)
		kcapi_cipher_destroy(ks->tfm);
	memset(ks, 0, sizeof(*ks));
}

static int kern_session_init(struct session *s, void *wctx, const uint8_t *key,
			     size_t key_len, const uint8_t *auth_key,
			     size_t auth_key_len)
{
	const struct kern_state *st = s->eng->priv;
	struct kern_sess *ks = (struct kern_sess *)s->key;
	unsigned alg = s->alg;
	if (wctx)
		return -EOPNOTSUPP; /* session-less: a socket per op, no */
	if (alg >= CRD_ALG_MAX_ || !kern_algs[alg].kname || !st->a[alg].ok)
		return -EOPNOTSUPP;
	/* XTS with equal halves: a decrypt-only session (session.c); a
	 * kernel in FIPS mode refuses the key below. */
	memset(ks, 0, sizeof(*ks));
	ks->aead = kern_algs[alg].aead;
	int err = kern_handle_init(&ks->tfm, ks->aead, st->a[alg].driver);
	if (err)
		return err == -ENOMEM ? -ENOMEM : -EIO;

	if (crd_alg_kind(alg) == CRD_KIND_AUTHENC) {
		uint8_t blob[8 + CRD_AUTH_KEY_MAX + CRD_KEY_MAX];
		size_t n = kern_authenc_blob(blob, auth_key, auth_key_len, key,
					     key_len);
		err = kcapi_aead_setkey(ks->tfm, blob, n);
		explicit_bzero(blob, sizeof(blob));
	} else if (ks->aead) {
		err = kcapi_aead_setkey(ks->tfm, key, key_len);
	} else {
		err = kcapi_cipher_setkey(ks->tfm, key, key_len);
	}
	if (!err && ks->aead)
		err = kcapi_aead_settaglen(ks->tfm, s->tag_len);
	if (err) {
		kern_session_fini(s);
		return -EINVAL; /* the kernel refused the key or tag size */
	}
	return 0;
}

/* ---- workers ---- */

static void *kern_worker_init(const struct engine *e)
{
	struct kern_state *st = e->priv;
	struct kern_worker *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	void *p = mmap(NULL, 2 * (size_t)KERN_SCRATCH, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		free(w);
		return NULL;
	}
	madvise(p, 2 * (size_t)KERN_SCRATCH, MADV_DONTDUMP); /* plaintext */
	w->in = p;
	w->out = w->in + KERN_SCRATCH;
	w->id = atomic_fetch_add(&st->next_worker_id, 1) % MAX_WORKERS;
	return w;
}

static void kern_worker_fini(void *wctx)
{
	struct kern_worker *w = wctx;
	if (!w)
		return;
	munmap(w->in, 2 * (size_t)KERN_SCRATCH);
	free(w);
}

/* This worker's operation socket on the session's transform. */
static struct kcapi_handle *kern_op_handle(struct kern_worker *w,
					   const struct session *s)
{
	struct kern_sess *ks = (struct kern_sess *)s->key;
	if (!ks->op[w->id] && kcapi_handle_reinit(&ks->op[w->id], ks->tfm, 0))
		ks->op[w->id] = NULL;
	return ks->op[w->id];
}

static int kern_aead_op(struct kern_worker *w, struct kcapi_handle *h,
			struct engine_op *op)
{
	int gmac = op->sess->alg == CRD_ALG_AES_GMAC;
	int rfc4106 = op->sess->alg == CRD_ALG_AES_GCM_RFC4106;
	int enc = op->op == CRD_OP_ENCRYPT;
	/* GMAC: the data is the AAD, and there is no plaintext. */
	const uint8_t *aad = gmac ? op->src : op->aad;
	size_t alen = gmac ? op->len : op->aad_len;
	size_t dlen = gmac ? 0 : op->len;
	size_t tlen = op->tag_len;

	memcpy(w->in, aad, alen);
	if (rfc4106) { /* the kernel wants the IV after the AAD, too */
		memcpy(w->in + alen, op->iv, 8);
		alen += 8;
	}
	if (dlen)
		memcpy(w->in + alen, op->src, dlen);
	size_t inlen = alen + dlen, outlen = alen + dlen + tlen;
	if (!enc) {
		memcpy(w->in + inlen, op->tag, tlen);
		inlen += tlen;
		outlen = alen + dlen;
	}
	kcapi_aead_setassoclen(h, alen);
	ssize_t r = enc ? kcapi_aead_encrypt(h, w->in, inlen, op->iv, w->out,
					     outlen ? outlen : 1,
					     KCAPI_ACCESS_HEURISTIC)
			: kcapi_aead_decrypt(h, w->in, inlen, op->iv, w->out,
					     outlen ? outlen : 1,
					     KCAPI_ACCESS_HEURISTIC);
	int st = CRD_ST_OK;
	if (r == -EBADMSG) {
		st = CRD_ST_AUTH_FAILED;
		if (dlen)
			explicit_bzero(op->dst, dlen);
	} else if (r < 0 || (size_t)r != outlen) {
		st = CRD_ST_ENGINE;
	} else {
		if (dlen)
			memcpy(op->dst, w->out + alen, dlen);
		if (enc)
			memcpy(op->tag, w->out + alen + dlen, tlen);
	}
	explicit_bzero(w->in, inlen);
	explicit_bzero(w->out, outlen);
	return st;
}

static int kern_cipher_op(struct kern_worker *w, struct kcapi_handle *h,
			  struct engine_op *op)
{
	if (op->len == 0)
		return CRD_ST_OK; /* nothing to do; the kernel wants data */
	memcpy(w->in, op->src, op->len);
	/* ECB has no IV; libkcapi sends none when iv is NULL. */
	const uint8_t *iv = op->sess->alg == CRD_ALG_AES_ECB ? NULL : op->iv;
	ssize_t r =
		op->op == CRD_OP_ENCRYPT
			? kcapi_cipher_encrypt(h, w->in, op->len, iv, w->out,
					       op->len, KCAPI_ACCESS_HEURISTIC)
			: kcapi_cipher_decrypt(h, w->in, op->len, iv, w->out,
					       op->len, KCAPI_ACCESS_HEURISTIC);
	int st = CRD_ST_OK;
	if (r < 0 || (size_t)r != op->len)
		st = CRD_ST_ENGINE;
	else
		memcpy(op->dst, w->out, op->len);
	explicit_bzero(w->in, op->len);
	explicit_bzero(w->out, op->len);
	return st;
}

static void kern_process(void *wctx, struct engine_op *ops, unsigned n)
{
	struct kern_worker *w = wctx;
	for (unsigned i = 0; i < n; i++) {
		struct engine_op *op = &ops[i];
		if (op->status != CRD_ST_OK)
			continue;
		struct kcapi_handle *h = kern_op_handle(w, op->sess);
		if (!h) {
			op->status = CRD_ST_ENGINE;
			continue;
		}
		const struct kern_sess *ks = (const void *)op->sess->key;
		op->status = ks->aead ? kern_aead_op(w, h, op)
				      : kern_cipher_op(w, h, op);
	}
}

/* The two flavours differ in their name, their capabilities, their probe
 * and their state (priv); everything else is one code path. */
#define KERN_ENGINE(name_, caps_, state_, probe_)                              \
	{                                                                      \
		.name = (name_), .caps = (caps_),                              \
		.n_caps = sizeof(caps_) / sizeof((caps_)[0]),                  \
		.priv = (state_), .probe = (probe_),                           \
		.session_init = kern_session_init,                             \
		.session_fini = kern_session_fini,                             \
		.worker_init = kern_worker_init,                               \
		.worker_fini = kern_worker_fini, .process = kern_process,      \
		.alg_unavailable = kern_alg_unavailable, .no_sessionless = 1,  \
	}

const struct engine engine_kernel =
	KERN_ENGINE("kernel", kern_caps, &kern_plain_state, kern_probe);
const struct engine engine_kernel_pcrypt =
	KERN_ENGINE("kernel-pcrypt", kern_pcrypt_caps, &kern_pcrypt_state,
		    kern_pcrypt_probe);
