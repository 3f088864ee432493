/* SPDX-License-Identifier: MIT */
/*
 * The aesni engine's authentication-only algorithms (auth.h) on
 * intel-ipsec-mb 1.3:
 *
 * - HMAC-SHA-n, AES-CMAC (128 and 256-bit keys: 1.3 has no CMAC-192) and
 *   AES-XCBC-MAC as jobs, submitted with the burst's other jobs so that
 *   they run multi-buffer; the states (HMAC ipad/opad, CMAC round keys
 *   and subkeys, XCBC k1 schedule and k2/k3) are computed at session
 *   creation. Jobs write the full MAC into per-burst scratch; truncation
 *   and the constant-time check are ours (aesni_auth_job_done).
 * - Messages an ipsec-mb job does not take go to OpenSSL with the same
 *   key: the empty message (refused by HMAC jobs) and messages longer
 *   than the 16-bit lane lengths allow, as engine_aesni.c's authenc.
 * - SHA-n as multi-buffer jobs up to AESNI_AUTH_JOB_MAX bytes; the empty
 *   message and longer ones with the single-buffer IMB_SHAn() calls,
 *   which take any length.
 */
#include "auth.h"
#include "session.h"

#include <errno.h>
#include <string.h>

#include <intel-ipsec-mb.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

/* The longest message one HMAC job hashes (measured: 65535 is refused);
 * used for CMAC and XCBC jobs as well. */
enum { AESNI_AUTH_JOB_MAX = 65534 };

/* Session key material: struct aesni_auth_key (auth.h). */
_Static_assert(sizeof(struct aesni_auth_key) <=
		       sizeof(((struct session *)0)->key),
	       "auth key fits the session");

/* Computed MACs of a burst's jobs, one per op (process takes at most
 * WORKER_BURST ops); not key material. */
static _Thread_local DECLARE_ALIGNED(uint8_t aesni_auth_mac[64][64], 16);
_Static_assert(WORKER_BURST <= 64, "a MAC slot per op of a burst");

/* The whole digest of len bytes at p (IMB_SHAn: any length). */
static void aesni_sha(IMB_MGR *m, int idx, const void *p, uint64_t len,
		      uint8_t *out)
{
	switch (idx) {
	case 0:
		IMB_SHA1(m, p, len, out);
		break;
	case 1:
		IMB_SHA224(m, p, len, out);
		break;
	case 2:
		IMB_SHA256(m, p, len, out);
		break;
	case 3:
		IMB_SHA384(m, p, len, out);
		break;
	default:
		IMB_SHA512(m, p, len, out);
		break;
	}
}

/* The state after one block (a key XORed with a pad). */
static void aesni_sha_block(IMB_MGR *m, int idx, const void *blk, uint8_t *st)
{
	switch (idx) {
	case 0:
		IMB_SHA1_ONE_BLOCK(m, blk, st);
		break;
	case 1:
		IMB_SHA224_ONE_BLOCK(m, blk, st);
		break;
	case 2:
		IMB_SHA256_ONE_BLOCK(m, blk, st);
		break;
	case 3:
		IMB_SHA384_ONE_BLOCK(m, blk, st);
		break;
	default:
		IMB_SHA512_ONE_BLOCK(m, blk, st);
		break;
	}
}

/* RFC 2104: K hashed when longer than the block B, zero-padded to B; the
 * states after (K ^ ipad) and (K ^ opad). */
static void aesni_hmac_init(IMB_MGR *m, struct aesni_auth_key *k, unsigned alg,
			    const uint8_t *key, size_t len)
{
	int idx = auth_sha_idx(alg);
	unsigned bl = auth_block_len(alg);
	uint8_t pad[128];

	if (len > bl) {
		aesni_sha(m, idx, key, len, k->raw);
		len = auth_digest_len(alg);
	} else if (len) {
		memcpy(k->raw, key, len);
	}
	k->raw_len = (uint16_t)len;
	for (unsigned i = 0; i < bl; i++)
		pad[i] = (i < len ? k->raw[i] : 0) ^ 0x36;
	aesni_sha_block(m, idx, pad, k->ipad);
	for (unsigned i = 0; i < bl; i++)
		pad[i] = (i < len ? k->raw[i] : 0) ^ 0x5c;
	aesni_sha_block(m, idx, pad, k->opad);
	explicit_bzero(pad, sizeof(pad));
}

int aesni_auth_session_init(struct session *s, void *mgr, const uint8_t *key,
			    size_t key_len)
{
	IMB_MGR *m = mgr;
	struct aesni_auth_key *k = (struct aesni_auth_key *)s->key;
	DECLARE_ALIGNED(uint8_t dec[16 * 15], 16);

	if (crd_alg_kind(s->alg) == CRD_KIND_HASH)
		return key_len ? -EINVAL : 0;
	if (s->alg == CRD_ALG_AES_CMAC) {
		if (key_len == 16) {
			IMB_AES_KEYEXP_128(m, key, k->enc, dec);
			IMB_AES_CMAC_SUBKEY_GEN_128(m, k->enc, k->sk1, k->sk2);
		} else if (key_len == 32) {
			IMB_AES_KEYEXP_256(m, key, k->enc, dec);
			IMB_AES_CMAC_SUBKEY_GEN_256(m, k->enc, k->sk1, k->sk2);
		} else {
			return -EINVAL;
		}
		explicit_bzero(dec, sizeof(dec));
	} else if (s->alg == CRD_ALG_AES_XCBC_MAC) {
		if (key_len != 16)
			return -EINVAL;
		IMB_AES_XCBC_KEYEXP(m, key, k->enc, k->sk1, k->sk2);
	} else { /* HMAC */
		aesni_hmac_init(m, k, s->alg, key, key_len);
		return 0;
	}
	memcpy(k->raw, key, key_len);
	k->raw_len = (uint16_t)key_len;
	return 0;
}

/*
 * OpenSSL's side of the fallback, fetched once (aesni_auth_probe) so that
 * no op takes the provider store's lock: MAC contexts with their digest
 * or cipher set (and an all-zero key), duplicated per op (the duplicate
 * gets the session's key and is freed, which cleanses it), and
 * AES-128-CBC for XCBC. Read-only
 * after the probe; workers only duplicate them.
 */
static struct {
	EVP_MAC_CTX *hmac[5]; /* SHA-1 .. SHA-512, by auth_sha_idx() */
	EVP_MAC_CTX *cmac[2]; /* AES-128, AES-256 */
	EVP_CIPHER *cbc128;
} aesni_evp;

int aesni_auth_probe(void)
{
	static const char *const cbc[] = { "AES-128-CBC", "AES-256-CBC" };
	static const unsigned hmacs[] = {
		CRD_ALG_HMAC_SHA1, CRD_ALG_HMAC_SHA224, CRD_ALG_HMAC_SHA256,
		CRD_ALG_HMAC_SHA384, CRD_ALG_HMAC_SHA512
	};
	if (aesni_evp.cbc128) /* probed before */
		return 0;
	/* OpenSSL 3.0 duplicates only a keyed MAC context: the templates
	 * are keyed with zeros, and each duplicate is keyed afresh. */
	static const uint8_t zero[32];
	EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC *cmac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	int ok = hmac && cmac;

	for (unsigned i = 0; ok && i < 5; i++) {
		OSSL_PARAM p[] = { OSSL_PARAM_construct_utf8_string(
					   OSSL_MAC_PARAM_DIGEST,
					   (char *)auth_md_name(hmacs[i]), 0),
				   OSSL_PARAM_construct_end() };
		aesni_evp.hmac[i] = EVP_MAC_CTX_new(hmac);
		ok = aesni_evp.hmac[i] &&
		     EVP_MAC_init(aesni_evp.hmac[i], zero, 32, p);
	}
	for (unsigned i = 0; ok && i < 2; i++) {
		OSSL_PARAM p[] = { OSSL_PARAM_construct_utf8_string(
					   OSSL_MAC_PARAM_CIPHER,
					   (char *)cbc[i], 0),
				   OSSL_PARAM_construct_end() };
		aesni_evp.cmac[i] = EVP_MAC_CTX_new(cmac);
		ok = aesni_evp.cmac[i] &&
		     EVP_MAC_init(aesni_evp.cmac[i], zero, 16 + 16 * i, p);
	}
	aesni_evp.cbc128 =
		ok ? EVP_CIPHER_fetch(NULL, "AES-128-CBC", NULL) : NULL;
	EVP_MAC_free(hmac); /* the contexts hold their own references */
	EVP_MAC_free(cmac);
	if (!aesni_evp.cbc128) {
		aesni_auth_fini();
		return -ENODEV;
	}
	return 0;
}

void aesni_auth_fini(void)
{
	for (unsigned i = 0; i < 5; i++)
		EVP_MAC_CTX_free(aesni_evp.hmac[i]);
	for (unsigned i = 0; i < 2; i++)
		EVP_MAC_CTX_free(aesni_evp.cmac[i]);
	EVP_CIPHER_free(aesni_evp.cbc128);
	memset(&aesni_evp, 0, sizeof(aesni_evp));
}

/* The MAC of a message no job takes, with OpenSSL. 0 or -EIO. */
static int aesni_auth_fallback(const struct engine_op *op, uint8_t *mac)
{
	const struct aesni_auth_key *k =
		(const struct aesni_auth_key *)op->sess->key;
	size_t n = 0;

	if (op->sess->alg == CRD_ALG_AES_XCBC_MAC) {
		EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
		uint8_t kx[48];
		int r = ctx ? auth_xcbc_derive(ctx, k->raw, kx) : -EIO;
		if (!r)
			r = auth_xcbc_mac(ctx, aesni_evp.cbc128, kx, op->src,
					  op->len, mac);
		EVP_CIPHER_CTX_free(ctx); /* cleanses the key schedule */
		explicit_bzero(kx, sizeof(kx));
		return r;
	}
	EVP_MAC_CTX *ctx = EVP_MAC_CTX_dup(
		op->sess->alg == CRD_ALG_AES_CMAC
			? aesni_evp.cmac[k->raw_len == 16 ? 0 : 1]
			: aesni_evp.hmac[auth_sha_idx(op->sess->alg)]);
	int ok = ctx && EVP_MAC_init(ctx, k->raw, k->raw_len, NULL) &&
		 EVP_MAC_update(ctx, op->src, op->len) &&
		 EVP_MAC_final(ctx, mac, &n, 64);
	EVP_MAC_CTX_free(ctx); /* cleanses the key */
	return ok ? 0 : -EIO;
}

/* Fill the next job for op (1..AESNI_AUTH_JOB_MAX bytes). */
static void aesni_auth_job(IMB_MGR *m, struct engine_op *op, uint8_t *mac)
{
	static const IMB_HASH_ALG hmac[] = {
		IMB_AUTH_HMAC_SHA_1,   IMB_AUTH_HMAC_SHA_224,
		IMB_AUTH_HMAC_SHA_256, IMB_AUTH_HMAC_SHA_384,
		IMB_AUTH_HMAC_SHA_512,
	};
	static const IMB_HASH_ALG sha[] = {
		IMB_AUTH_SHA_1,	  IMB_AUTH_SHA_224, IMB_AUTH_SHA_256,
		IMB_AUTH_SHA_384, IMB_AUTH_SHA_512,
	};
	const struct aesni_auth_key *k =
		(const struct aesni_auth_key *)op->sess->key;
	IMB_JOB *job = IMB_GET_NEXT_JOB(m);

	job->cipher_mode = IMB_CIPHER_NULL;
	job->cipher_direction = IMB_DIR_ENCRYPT;
	job->chain_order = IMB_ORDER_HASH_CIPHER;
	job->src = op->src;
	job->dst = NULL; /* a NULL cipher copies nothing */
	job->cipher_start_src_offset_in_bytes = 0;
	job->msg_len_to_cipher_in_bytes = 0;
	job->iv = NULL;
	job->iv_len_in_bytes = 0;
	job->hash_start_src_offset_in_bytes = 0;
	job->msg_len_to_hash_in_bytes = op->len;
	job->auth_tag_output = mac;
	job->user_data = op;
	switch (op->sess->alg) {
	case CRD_ALG_AES_CMAC:
		job->hash_alg = k->raw_len == 16 ? IMB_AUTH_AES_CMAC
						 : IMB_AUTH_AES_CMAC_256;
		job->u.CMAC._key_expanded = k->enc;
		job->u.CMAC._skey1 = k->sk1;
		job->u.CMAC._skey2 = k->sk2;
		job->auth_tag_output_len_in_bytes = 16;
		break;
	case CRD_ALG_AES_XCBC_MAC:
		job->hash_alg = IMB_AUTH_AES_XCBC;
		job->u.XCBC._k1_expanded = (const uint32_t *)k->enc;
		job->u.XCBC._k2 = k->sk1;
		job->u.XCBC._k3 = k->sk2;
		job->auth_tag_output_len_in_bytes = 12; /* all 1.3 takes */
		break;
	default:
		if (crd_alg_kind(op->sess->alg) == CRD_KIND_HASH) {
			job->hash_alg = sha[auth_sha_idx(op->sess->alg)];
			job->auth_tag_output_len_in_bytes =
				auth_digest_len(op->sess->alg);
			break;
		}
		job->hash_alg = hmac[auth_sha_idx(op->sess->alg)];
		job->u.HMAC._hashed_auth_key_xor_ipad = k->ipad;
		job->u.HMAC._hashed_auth_key_xor_opad = k->opad;
		job->auth_tag_output_len_in_bytes =
			auth_digest_len(op->sess->alg);
		break;
	}
}

int aesni_auth_op(void *mgr, struct engine_op *op, unsigned slot)
{
	IMB_MGR *m = mgr;
	uint8_t *mac = aesni_auth_mac[slot % 64];

	/* Digests: multi-buffer jobs where a job takes the message (a
	 * sixteenth of the time of IMB_SHAn() at 1 KiB, measured), else the
	 * single-buffer call, which takes any length. */
	if (crd_alg_kind(op->sess->alg) == CRD_KIND_HASH &&
	    (op->len == 0 || op->len > AESNI_AUTH_JOB_MAX)) {
		aesni_sha(m, auth_sha_idx(op->sess->alg), op->src, op->len,
			  mac);
	} else if (op->len == 0 || op->len > AESNI_AUTH_JOB_MAX) {
		if (aesni_auth_fallback(op, mac)) {
			op->status = CRD_ST_ENGINE;
			return 0;
		}
	} else {
		aesni_auth_job(m, op, mac);
		return 1;
	}
	op->status = auth_finish(op, mac);
	return 0;
}

void aesni_auth_job_done(void *j)
{
	IMB_JOB *job = j;
	struct engine_op *op = job->user_data;

	op->status = job->status == IMB_STATUS_COMPLETED
			     ? auth_finish(op, job->auth_tag_output)
			     : CRD_ST_ENGINE;
}
