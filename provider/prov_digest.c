/* SPDX-License-Identifier: MIT */
/*
 * SHA-1 and SHA-2 digests over the daemon (keyless sessions, one per
 * digest and connection), and the message machinery digests and MACs
 * share (prov_hash.h).
 */
#include "prov_hash.h"

#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>

/* ---- The shared message ---- */

/* The session for m: the connection's keyless one for a digest, the
 * key's own for a MAC. 0 or -errno, not raised. */
static int ph_session(struct ph_msg *m, struct prov_conn **conn, uint32_t *id)
{
	if (!m->key) {
		int err = prov_hash_sess(m->p, conn, m->alg, id);
		return err;
	}
	int err = prov_sess_open(m->p, &m->sess, m->alg, m->key, m->key_len, 0);
	if (err)
		return err;
	atomic_fetch_add(&m->sess.conn->refs, 1);
	*conn = m->sess.conn;
	*id = m->sess.id;
	return 0;
}

static int ph_go_sw(struct ph_msg *m)
{
	if (!m->sw_ops->begin(m->owner) ||
	    (m->len && !m->sw_ops->update(m->owner, m->buf, m->len)))
		return 0;
	m->sw = 1;
	m->len = 0;
	return 1;
}

/* An update failed with err (reason: PROV_R_*): keep it for final, which
 * raises it (prov_hash.h); the update itself succeeds. */
static int ph_keep_failure(struct ph_msg *m, int err, int reason)
{
	if (!m->failed) {
		m->failed = err;
		m->failed_reason = reason;
	}
	pio_stream_free(m->st);
	m->st = NULL;
	prov_conn_check(m->p, m->conn, err);
	prov_conn_put(m->conn);
	m->conn = NULL;
	if (m->buf)
		OPENSSL_cleanse(m->buf, m->len);
	m->len = 0;
	return 1;
}

/* The daemon failed err before any of the message went: fall back, or
 * keep the failure for final (from an update) or raise it (final). */
static int ph_failed(struct ph_msg *m, int err, int in_update)
{
	if (prov_fallback(m->p, err))
		return ph_go_sw(m);
	int reason = err == -ECONNREFUSED || err == -ENOENT ? PROV_R_UNREACHABLE
							    : PROV_R_SESSION;
	if (in_update)
		return ph_keep_failure(m, err, reason);
	PROV_ERR(m->p, reason, "%s: %s", m->name, cc_strerror(err));
	return 0;
}

/* The buffer grew past PH_HOLD: open the stream with it. */
static int ph_start(struct ph_msg *m)
{
	if (prov_small(m->p, m->len))
		return ph_go_sw(m);
	struct prov_conn *c;
	uint32_t id;
	ERR_set_mark();
	int err = ph_session(m, &c, &id);
	if (!err) {
		struct cc_stream_params sp = { .session = id,
					       .dir = CC_ENCRYPT };
		err = pio_stream_open(m->p, c, &sp, cc_alg_tag_len(m->alg),
				      &m->st);
		if (err) {
			m->st = NULL;
			prov_conn_put(c);
		}
	}
	ERR_pop_to_mark();
	if (err)
		return ph_failed(m, err, 1);
	atomic_fetch_add(&m->p->n_daemon, 1);
	m->conn = c;
	size_t n;
	err = pio_stream_update(m->st, m->buf, m->len, NULL, &n);
	OPENSSL_cleanse(m->buf, m->len);
	m->len = 0;
	if (err)
		return ph_keep_failure(m, err, prov_op_reason(err));
	return 1;
}

int ph_update(struct ph_msg *m, const void *data, size_t len)
{
	if (m->failed)
		return 1; /* final says so */
	if (m->sw)
		return m->sw_ops->update(m->owner, data, len);
	if (m->st) {
		size_t n;
		int err = pio_stream_update(m->st, data, len, NULL, &n);
		if (err)
			return ph_keep_failure(m, err, prov_op_reason(err));
		return 1;
	}
	if (m->len + len > m->cap) {
		size_t cap = m->len + len <= PH_HOLD ? PH_HOLD : m->len + len;
		uint8_t *b = OPENSSL_clear_realloc(m->buf, m->cap, cap);
		if (!b)
			return ph_keep_failure(m, -ENOMEM, PROV_R_NOMEM);
		m->buf = b;
		m->cap = cap;
	}
	if (len)
		memcpy(m->buf + m->len, data, len);
	m->len += len;
	return m->len <= PH_HOLD ? 1 : ph_start(m);
}

int ph_final(struct ph_msg *m, uint8_t *out, size_t *outl)
{
	uint8_t tag[CRD_TAG_MAX];
	unsigned tag_len = cc_alg_tag_len(m->alg);
	int err;
	if (m->failed) {
		PROV_ERR(m->p, m->failed_reason, "%s update: %s", m->name,
			 cc_strerror(m->failed));
		m->failed = 0;
		return 0;
	}
	if (m->sw)
		return m->sw_ops->final(m->owner, out, outl);
	if (m->st) {
		size_t n;
		err = pio_stream_final(m->st, NULL, &n, tag, 0);
		pio_stream_free(m->st);
		m->st = NULL;
		prov_conn_check(m->p, m->conn, err);
		prov_conn_put(m->conn);
		m->conn = NULL;
	} else {
		/* All of it is here: one op. */
		if (prov_small(m->p, m->len))
			return ph_go_sw(m) &&
			       m->sw_ops->final(m->owner, out, outl);
		struct prov_conn *c;
		uint32_t id;
		ERR_set_mark();
		err = ph_session(m, &c, &id);
		if (!err) {
			err = pio_crypt(m->p, c, id, tag_len, CC_ENCRYPT, NULL,
					0, NULL, 0, m->len ? m->buf : tag, NULL,
					m->len, tag, 0);
			prov_conn_check(m->p, c, err);
			prov_conn_put(c);
		}
		ERR_pop_to_mark();
		if (err && prov_err_fallback_ok(err))
			return ph_failed(m, err, 0) &&
			       m->sw_ops->final(m->owner, out, outl);
		if (!err)
			atomic_fetch_add(&m->p->n_daemon, 1);
		OPENSSL_cleanse(m->buf, m->len);
		m->len = 0;
	}
	if (err) {
		prov_conn_check(m->p, m->conn, err);
		PROV_ERR(m->p, prov_op_reason(err), "%s final: %s", m->name,
			 cc_strerror(err));
		return 0;
	}
	memcpy(out, tag, tag_len);
	OPENSSL_cleanse(tag, sizeof(tag));
	*outl = tag_len;
	return 1;
}

void ph_reset(struct ph_msg *m)
{
	pio_stream_free(m->st);
	m->st = NULL;
	prov_conn_put(m->conn);
	m->conn = NULL;
	if (m->buf)
		OPENSSL_cleanse(m->buf, m->len);
	m->len = 0;
	m->sw = 0;
	m->failed = 0;
}

int ph_dup(struct ph_msg *dst, const struct ph_msg *src)
{
	dst->buf = NULL;
	dst->cap = 0;
	dst->st = NULL;
	dst->conn = NULL;
	memset(&dst->sess, 0, sizeof(dst->sess));
	if (src->st) {
		/* Past the buffer: the daemon copies the running hash state
		 * into a stream of the copy's session (a MAC's own, of the
		 * same key; a digest's is the connection's keyless one), on
		 * the source's connection and queue. */
		struct prov_conn *c = NULL;
		uint32_t id = 0;
		int err = ph_session(dst, &c, &id);
		if (!err && c != pio_stream_conn(src->st))
			err = -EPIPE; /* the source's connection is gone */
		if (!err)
			err = pio_stream_dup(src->st, id, &dst->st);
		if (err) {
			dst->st = NULL;
			prov_conn_put(c);
			PROV_ERR(src->p, PROV_R_OP,
				 "%s: duplicating a context mid-message: %s",
				 src->name, cc_strerror(err));
			return 0;
		}
		dst->conn = c; /* ph_session's reference */
	}
	if (src->cap) {
		dst->buf = OPENSSL_malloc(src->cap);
		if (!dst->buf)
			return 0;
		dst->cap = src->cap;
		memcpy(dst->buf, src->buf, src->len);
	}
	return 1;
}

void ph_free(struct ph_msg *m)
{
	ph_reset(m);
	prov_sess_close(&m->sess);
	OPENSSL_clear_free(m->buf, m->cap);
	m->buf = NULL;
	m->cap = 0;
}

/* ---- Digests ---- */

struct pd_info {
	const char *names;
	enum cc_alg alg;
	size_t size, blocksize;
};

struct pd_ctx {
	const struct pd_info *di;
	struct ph_msg m;
	EVP_MD *swmd; /* owned */
	EVP_MD_CTX *swctx;
};

static int pd_sw_begin(void *owner)
{
	struct pd_ctx *d = owner;
	char name[32];
	size_t n = strcspn(d->di->names, ":");
	memcpy(name, d->di->names, n);
	name[n] = 0;
	if (!d->swmd && !(d->swmd = prov_fb_md(d->m.p, name)))
		return 0;
	if (!d->swctx && !(d->swctx = EVP_MD_CTX_new()))
		return 0;
	return EVP_DigestInit_ex2(d->swctx, d->swmd, NULL);
}

static int pd_sw_update(void *owner, const uint8_t *data, size_t len)
{
	struct pd_ctx *d = owner;
	return EVP_DigestUpdate(d->swctx, data, len);
}

static int pd_sw_final(void *owner, uint8_t *out, size_t *outl)
{
	struct pd_ctx *d = owner;
	unsigned n = 0;
	int ok = EVP_DigestFinal_ex(d->swctx, out, &n);
	*outl = n;
	return ok;
}

static const struct ph_sw_ops pd_sw = { pd_sw_begin, pd_sw_update,
					pd_sw_final };

static void *pd_new(void *provctx, const struct pd_info *di)
{
	struct pd_ctx *d = OPENSSL_zalloc(sizeof(*d));
	if (!d)
		return NULL;
	d->di = di;
	d->m.p = provctx;
	d->m.alg = di->alg;
	d->m.name = di->names;
	d->m.sw_ops = &pd_sw;
	d->m.owner = d;
	return d;
}

static void pd_free(void *vctx)
{
	struct pd_ctx *d = vctx;
	if (!d)
		return;
	ph_free(&d->m);
	EVP_MD_CTX_free(d->swctx);
	EVP_MD_free(d->swmd);
	OPENSSL_clear_free(d, sizeof(*d));
}

static void *pd_dup(void *vctx)
{
	const struct pd_ctx *s = vctx;
	struct pd_ctx *d = OPENSSL_memdup(s, sizeof(*s));
	if (!d)
		return NULL;
	d->m.owner = d;
	d->swctx = NULL;
	d->swmd = NULL;
	if (s->swmd && EVP_MD_up_ref(s->swmd))
		d->swmd = s->swmd;
	if (!ph_dup(&d->m, &s->m))
		goto err;
	if (s->swctx && !((d->swctx = EVP_MD_CTX_new()) &&
			  EVP_MD_CTX_copy_ex(d->swctx, s->swctx)))
		goto err;
	return d;
err:
	pd_free(d);
	return NULL;
}

static int pd_init(void *vctx, const OSSL_PARAM params[])
{
	struct pd_ctx *d = vctx;
	ph_reset(&d->m);
	return 1;
}

static int pd_update(void *vctx, const unsigned char *in, size_t inl)
{
	struct pd_ctx *d = vctx;
	return ph_update(&d->m, in, inl);
}

static int pd_final(void *vctx, unsigned char *out, size_t *outl, size_t outsz)
{
	struct pd_ctx *d = vctx;
	if (outsz < d->di->size) {
		PROV_ERR(d->m.p, PROV_R_BAD_PARAM, "output buffer too small");
		return 0;
	}
	return ph_final(&d->m, out, outl);
}

static int pd_get_params(const struct pd_info *di, OSSL_PARAM params[])
{
	OSSL_PARAM *p;
	if ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_BLOCK_SIZE)) &&
	    !OSSL_PARAM_set_size_t(p, di->blocksize))
		return 0;
	if ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_SIZE)) &&
	    !OSSL_PARAM_set_size_t(p, di->size))
		return 0;
	if ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_XOF)) &&
	    !OSSL_PARAM_set_int(p, 0))
		return 0;
	if ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_ALGID_ABSENT)) &&
	    !OSSL_PARAM_set_int(p, 0))
		return 0;
	return 1;
}

static const OSSL_PARAM pd_gettable[] = {
	OSSL_PARAM_size_t(OSSL_DIGEST_PARAM_BLOCK_SIZE, NULL),
	OSSL_PARAM_size_t(OSSL_DIGEST_PARAM_SIZE, NULL),
	OSSL_PARAM_int(OSSL_DIGEST_PARAM_XOF, NULL),
	OSSL_PARAM_int(OSSL_DIGEST_PARAM_ALGID_ABSENT, NULL), OSSL_PARAM_END
};

static const OSSL_PARAM *pd_gettable_params(void *provctx)
{
	return pd_gettable;
}

#define FN(id, f)                                                              \
	{                                                                      \
		id, (void (*)(void))f                                          \
	}
#define PD(id, names_, alg_, size_, bs)                                        \
	static const struct pd_info pdi_##id = { names_, alg_, size_, bs };    \
	static void *pd_new_##id(void *provctx)                                \
	{                                                                      \
		return pd_new(provctx, &pdi_##id);                             \
	}                                                                      \
	static int pd_get_params_##id(OSSL_PARAM params[])                     \
	{                                                                      \
		return pd_get_params(&pdi_##id, params);                       \
	}                                                                      \
	static const OSSL_DISPATCH pdd_##id[] = {                              \
		FN(OSSL_FUNC_DIGEST_NEWCTX, pd_new_##id),                      \
		FN(OSSL_FUNC_DIGEST_FREECTX, pd_free),                         \
		FN(OSSL_FUNC_DIGEST_DUPCTX, pd_dup),                           \
		FN(OSSL_FUNC_DIGEST_INIT, pd_init),                            \
		FN(OSSL_FUNC_DIGEST_UPDATE, pd_update),                        \
		FN(OSSL_FUNC_DIGEST_FINAL, pd_final),                          \
		FN(OSSL_FUNC_DIGEST_GET_PARAMS, pd_get_params_##id),           \
		FN(OSSL_FUNC_DIGEST_GETTABLE_PARAMS, pd_gettable_params),      \
		{ 0, NULL }                                                    \
	};

#define N_SHA1 "SHA1:SHA-1:SSL3-SHA1:1.3.14.3.2.26"
#define N_SHA224 "SHA2-224:SHA-224:SHA224:2.16.840.1.101.3.4.2.4"
#define N_SHA256 "SHA2-256:SHA-256:SHA256:2.16.840.1.101.3.4.2.1"
#define N_SHA384 "SHA2-384:SHA-384:SHA384:2.16.840.1.101.3.4.2.2"
#define N_SHA512 "SHA2-512:SHA-512:SHA512:2.16.840.1.101.3.4.2.3"
PD(sha1, N_SHA1, CC_ALG_SHA1, 20, 64)
PD(sha224, N_SHA224, CC_ALG_SHA224, 28, 64)
PD(sha256, N_SHA256, CC_ALG_SHA256, 32, 64)
PD(sha384, N_SHA384, CC_ALG_SHA384, 48, 128)
PD(sha512, N_SHA512, CC_ALG_SHA512, 64, 128)

const OSSL_ALGORITHM prov_digests[] = {
	{ N_SHA1, "provider=cryptod", pdd_sha1, NULL },
	{ N_SHA224, "provider=cryptod", pdd_sha224, NULL },
	{ N_SHA256, "provider=cryptod", pdd_sha256, NULL },
	{ N_SHA384, "provider=cryptod", pdd_sha384, NULL },
	{ N_SHA512, "provider=cryptod", pdd_sha512, NULL },
	{ NULL, NULL, NULL, NULL },
};
