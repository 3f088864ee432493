/* SPDX-License-Identifier: MIT */
/*
 * The cipher context the cipher files share: prov_cipher.c (the table,
 * the context's life, parameters), prov_path.c (a message's path: the
 * daemon or the fallback context), prov_mode.h (each mode's operations,
 * through which prov_cipher.c reaches the mode files), prov_block.c
 * (CBC, ECB, CTR, XTS, ChaCha20: one cc_crypt() per update, the chaining
 * state kept here), prov_aead.c (GCM, ChaCha20-Poly1305: a daemon stream
 * per message, TLS records as one op), prov_ccm.c (CCM: one op per
 * message) and prov_tls.c (CBC TLS records: padding and MAC).
 */
#ifndef CRYPTOD_PROV_CIPHER_H
#define CRYPTOD_PROV_CIPHER_H

#include "prov.h"

enum pc_kind {
	PC_CBC,
	PC_ECB,
	PC_CTR,
	PC_XTS,
	PC_CHACHA20,
	PC_GCM,
	PC_CHACHAPOLY,
	PC_CCM,
};

#define PC_F_AEAD 1u
#define PC_F_CUSTOM_IV 2u

struct pc_mode;

struct pc_info {
	const char *names;	   /* OpenSSL's names for it, ':'-separated */
	const struct pc_mode *ops; /* its mode's operations (prov_mode.h) */
	enum pc_kind kind;
	enum cc_alg alg;
	unsigned mode; /* EVP_CIPH_*_MODE */
	size_t keylen, ivlen, blocksize;
	unsigned flags;
};

#define PC_IV_MAX CC_IV_MAX /* GCM's longest IV, the daemon's too: 128 */
#define PC_TAG_MAX 16
#define PC_TLS_AAD_LEN 13
#define PC_TLS_MAC_MAX 64 /* EVP_MAX_MD_SIZE */

#define PC_SW 1

enum pc_iv_state { IV_UNSET, IV_BUFFERED, IV_COPIED, IV_FINISHED };

struct pc_ctx {
	struct prov *p; /* not owned */
	const struct pc_info *ci;
	int enc;
	int key_set;
	uint8_t key[64]; /* kept for dupctx, fallback, reconnects; wiped */
	size_t keylen;
	uint8_t oiv[PC_IV_MAX];	  /* the IV as set */
	uint8_t iv[PC_IV_MAX];	  /* the chaining IV / counter block now */
	uint8_t nonce[PC_IV_MAX]; /* AEAD: the IV this message runs with */
	size_t ivlen;
	int iv_set;
	struct prov_sess sess;

	/* The message: from init (key or IV) to final. */
	int started; /* its first piece went out (the path is chosen) */
	int sw;	     /* ... to swctx rather than the daemon */
	EVP_CIPHER_CTX *swctx; /* owned, reused */
	EVP_CIPHER *swcipher;  /* owned, fetched once */

	/* Block and stream modes (prov_block.c). */
	unsigned pad;
	uint8_t buf[16]; /* a partial block, or the held-back last one */
	size_t bufsz;
	unsigned num;	/* CTR, ChaCha20: bytes of ks used */
	int blk_ran;	/* an op of this message reached the daemon */
	uint8_t ks[64]; /* ... the keystream of the current block */
	/* CTR, ChaCha20: keystream fetched ahead (prov_block.c): ks_buf
	 * from the counter ks_iv on, ks_pos bytes of it used; ks_next, the
	 * fetch under way, from ks_next_iv on. While they are held, iv and
	 * num say where the message is, as without them. */
	struct pio_kept ks_buf;
	size_t ks_pos;
	uint8_t ks_iv[16];
	struct pio_ticket ks_next;
	uint8_t ks_next_iv[16];
	size_t ks_ahead; /* the next fetch's size; 0: none this message */

	/* CBC TLS records (prov_tls.c): every update is one record. */
	unsigned tls_version; /* 0 = not in TLS record mode */
	size_t tls_mac_size;
	uint8_t tls_mac[PC_TLS_MAC_MAX]; /* the last record opened's */

	/* AEAD (prov_aead.c). */
	/* The message ran as one op at its first data update (PCA_EARLY_*):
	 * an encryption keeps its ciphertext in the arena in case more
	 * data follows; a decryption keeps the tag it verified. */
	int early;
	struct pio_kept kept;
	uint8_t early_tag[PC_TAG_MAX];
	struct pio_stream *st;	   /* owned: the message's stream */
	struct prov_conn *st_conn; /* the reference st lives on */
	uint8_t *aad; /* owned: AAD buffered until the first data */
	size_t aad_len, aad_cap;
	int data_seen; /* data went through: no more AAD */
	uint8_t tag[PC_TAG_MAX];
	size_t taglen; /* 0 = not set (decrypt) / not made (encrypt) */
	enum pc_iv_state iv_state;
	int iv_gen, iv_gen_rand;
	/* A TLS record's header (tlsaad), here and in prov_ccm.c. */
	uint8_t tls_aad[PC_TLS_AAD_LEN];
	size_t tls_aad_len; /* 0 = not in TLS record mode */
	size_t tls_aad_pad;
	size_t tls_payload; /* ChaCha20-Poly1305 */
	uint64_t tls_enc_records;
	size_t ccm_m;	/* CCM: the tag length */
	size_t ccm_len; /* CCM: the message length, given up front */
	int ccm_len_set;
};

/* prov_path.c: the message's path, below the mode files */
/* "AES-128-GCM": the cipher's first name, in buf. */
const char *pc_name(const struct pc_info *ci, char *buf, size_t len);
int pc_sw_begin(struct pc_ctx *c, const uint8_t *aad, size_t aad_len);
/* The update and final helpers return 0, -errno (an error raised), or
 * PC_SW: the message just went in-process, repeat the call on swctx.
 * pc_begin chooses the message's path at its first piece of len bytes: 0 (the
 * daemon, the session open), PC_SW (in-process: swctx initialised) or
 * -errno with an error raised. */
int pc_begin(struct pc_ctx *c, size_t len, unsigned tag_len);
void pc_end(struct pc_ctx *c);
/* A TLS record's AEAD op, over tls_aad, its path chosen by itself (every
 * record is a message): the daemon, or sw in-process below min_size and
 * when the daemon fails with fallback on. Returns 0 or a CC_ERR_*
 * (CC_ERR_AUTH_FAILED for a record that does not open, or that sw could
 * not run: pc_sw_begin raised why) for the caller to raise. */
typedef int pc_sw_op(struct pc_ctx *c, const uint8_t *iv, unsigned iv_len,
		     const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag);
int pc_record_op(struct pc_ctx *c, unsigned tag_len, const uint8_t *iv,
		 unsigned iv_len, const uint8_t *in, uint8_t *out, size_t len,
		 uint8_t *tag, pc_sw_op *sw);
int pc_op_err(struct pc_ctx *c, int err, const char *what);
/* 1 when the context has its key and (if the cipher takes one) its IV;
 * else 0 with an error raised. */
int pc_keyed(struct pc_ctx *c);

/* prov_block.c: the cc_crypt()-based modes */
int pcb_update(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize,
	       const uint8_t *in, size_t inl);
int pcb_final(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize);
/* len bytes (whole blocks) through the daemon, the chaining state kept. */
int pcb_crypt(struct pc_ctx *c, const uint8_t *in, uint8_t *out, size_t len);

/* prov_tls.c: CBC with tls-version set. The parameter functions return
 * OpenSSL's 1 / 0 and ignore what is not theirs; pct_update, a record
 * (prov_cipher.c calls it instead of the mode's update while tls-version
 * is set), returns as pcb_update. */
int pct_set_ctx_params(struct pc_ctx *c, const OSSL_PARAM params[]);
int pct_get_ctx_params(struct pc_ctx *c, OSSL_PARAM params[]);
int pct_update(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize,
	       const uint8_t *in, size_t inl);

/* prov_aead.c */
int pca_init(struct pc_ctx *c, int key_changed, int iv_changed);
int pca_update(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize,
	       const uint8_t *in, size_t inl);
int pca_final(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize);
int pca_cipher(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize,
	       const uint8_t *in, size_t inl);
/* The parameter functions are the dispatch functions' bodies: OpenSSL's
 * 1 / 0. */
int pca_get_ctx_params(struct pc_ctx *c, OSSL_PARAM params[]);
int pca_set_ctx_params(struct pc_ctx *c, const OSSL_PARAM params[]);
void pca_reset(struct pc_ctx *c);
int pca_dup(struct pc_ctx *dst, const struct pc_ctx *src);

/* prov_ccm.c */
void pcc_initctx(struct pc_ctx *c);
int pcc_update(struct pc_ctx *c, uint8_t *out, size_t *outl, size_t outsize,
	       const uint8_t *in, size_t inl);
int pcc_get_ctx_params(struct pc_ctx *c, OSSL_PARAM params[]);
int pcc_set_ctx_params(struct pc_ctx *c, const OSSL_PARAM params[]);

#endif
