/* SPDX-License-Identifier: MIT */
/*
 * A cipher message's path (prov_cipher.h): the daemon or the in-process
 * fallback, chosen at its first piece; the errors of its ops. Below the
 * mode files, which call it, and prov_cipher.c; it reaches a mode only
 * through the cipher's table (prov_mode.h).
 */
#include "prov_cipher.h"
#include "prov_mode.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>

/* ---- The path of a message ---- */

const char *pc_name(const struct pc_info *ci, char *buf, size_t len)
{
	size_t n = strcspn(ci->names, ":");
	if (n >= len)
		n = len - 1;
	memcpy(buf, ci->names, n);
	buf[n] = 0;
	return buf;
}

int pc_keyed(struct pc_ctx *c)
{
	if (c->key_set && (!c->ci->ivlen || c->iv_set))
		return 1;
	PROV_ERR(c->p, PROV_R_STATE, "no key or IV set");
	return 0;
}

int pc_op_err(struct pc_ctx *c, int err, const char *what)
{
	char name[32];
	prov_conn_check(c->p, c->sess.conn, err);
	if (err == CC_ERR_AUTH_FAILED)
		PROV_ERR(c->p, PROV_R_BAD_TAG, "%s: %s",
			 pc_name(c->ci, name, sizeof(name)), cc_strerror(err));
	else
		PROV_ERR(c->p, prov_op_reason(err), "%s %s: %s",
			 pc_name(c->ci, name, sizeof(name)), what,
			 cc_strerror(err));
	return err;
}

int pc_sw_begin(struct pc_ctx *c, const uint8_t *aad, size_t aad_len)
{
	char name[32];
	if (!c->swcipher &&
	    !(c->swcipher =
		      prov_fb_cipher(c->p, pc_name(c->ci, name, sizeof(name)))))
		return -ENOENT;
	if (!c->swctx && !(c->swctx = EVP_CIPHER_CTX_new()))
		return -ENOMEM;
	const struct pc_info *ci = c->ci;
	size_t ivlen = c->ivlen;
	OSSL_PARAM pre[3] = { OSSL_PARAM_END, OSSL_PARAM_END, OSSL_PARAM_END };
	/* Always: CCM's context starts at 7 bytes, not the cipher's 12. */
	if (ci->flags & PC_F_AEAD)
		pre[0] = OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_IVLEN,
						     &ivlen);
	/* CCM takes its tag (or just its length) before the key. */
	if (ci->kind == PC_CCM)
		pre[pre[0].key ? 1 : 0] = OSSL_PARAM_construct_octet_string(
			OSSL_CIPHER_PARAM_AEAD_TAG, c->enc ? NULL : c->tag,
			c->ccm_m);
	const uint8_t *iv = !ci->ivlen ? NULL
			    : (ci->flags & PC_F_AEAD) && ci->kind != PC_CCM
				    ? c->nonce
				    : c->iv;
	int outl, ok = EVP_CipherInit_ex2(c->swctx, c->swcipher, NULL, NULL,
					  c->enc, pre) &&
		       EVP_CipherInit_ex2(c->swctx, NULL, c->key, iv, c->enc,
					  NULL);
	if (ok && (ci->kind == PC_CBC || ci->kind == PC_ECB))
		ok = EVP_CIPHER_CTX_set_padding(c->swctx, (int)c->pad);
	if (ok && (ci->flags & PC_F_AEAD) && ci->kind != PC_CCM && !c->enc &&
	    c->taglen) {
		OSSL_PARAM t[] = { OSSL_PARAM_construct_octet_string(
					   OSSL_CIPHER_PARAM_AEAD_TAG, c->tag,
					   c->taglen),
				   OSSL_PARAM_END };
		ok = EVP_CIPHER_CTX_set_params(c->swctx, t);
	}
	if (ok && aad_len)
		ok = EVP_CipherUpdate(c->swctx, NULL, &outl, aad, (int)aad_len);
	if (!ok) {
		PROV_ERR(c->p, PROV_R_FALLBACK, "%s: cannot start it",
			 pc_name(ci, name, sizeof(name)));
		return -EINVAL;
	}
	return 0;
}

int pc_begin(struct pc_ctx *c, size_t len, unsigned tag_len)
{
	char name[32];
	if (c->started)
		return c->sw;
	if (!c->key_set) {
		PROV_ERR(c->p, PROV_R_STATE, "no key set");
		return -EINVAL;
	}
	int err = 0;
	if (!prov_small(c->p, len)) {
		/* A failure that falls back leaves nothing on the stack. */
		unsigned long before = ERR_peek_last_error();
		ERR_set_mark();
		err = prov_sess_open(c->p, &c->sess, c->ci->alg, c->key,
				     c->keylen, tag_len);
		if (!err) {
			ERR_clear_last_mark();
			atomic_fetch_add(&c->p->n_daemon, 1);
			c->started = 1;
			c->sw = 0;
			return 0;
		}
		if (!prov_fallback(c->p, err)) {
			ERR_clear_last_mark();
			if (ERR_peek_last_error() != before)
				return err; /* unreachable: raised already */
			PROV_ERR(c->p, PROV_R_SESSION, "%s: %s",
				 pc_name(c->ci, name, sizeof(name)),
				 cc_strerror(err));
			return err;
		}
		ERR_pop_to_mark();
	}
	/* CCM replays its calls in its own order (prov_ccm.c). */
	err = c->ci->kind == PC_CCM ? 0 : pc_sw_begin(c, c->aad, c->aad_len);
	if (err)
		return err;
	c->started = 1;
	c->sw = 1;
	return PC_SW;
}

int pc_record_op(struct pc_ctx *c, unsigned tag_len, const uint8_t *iv,
		 unsigned iv_len, const uint8_t *in, uint8_t *out, size_t len,
		 uint8_t *tag, pc_sw_op *sw)
{
	if (prov_small(c->p, len))
		return sw(c, iv, iv_len, in, out, len, tag);
	int err = prov_sess_open(c->p, &c->sess, c->ci->alg, c->key, c->keylen,
				 tag_len);
	if (!err)
		err = pio_crypt(c->p, c->sess.conn, c->sess.id, tag_len,
				c->enc ? CC_ENCRYPT : CC_DECRYPT, iv, iv_len,
				c->tls_aad, PC_TLS_AAD_LEN, in, out, len, tag,
				1);
	if (!err) {
		atomic_fetch_add(&c->p->n_daemon, 1);
		return 0;
	}
	prov_conn_check(c->p, c->sess.conn, err);
	if (err != CC_ERR_AUTH_FAILED && prov_fallback(c->p, err))
		return sw(c, iv, iv_len, in, out, len, tag);
	return err;
}

void pc_end(struct pc_ctx *c)
{
	if (c->ci->ops->reset)
		c->ci->ops->reset(c);
	c->started = 0;
	c->sw = 0;
	c->bufsz = 0;
	c->num = 0;
	c->blk_ran = 0;
}
