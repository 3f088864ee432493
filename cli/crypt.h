/* SPDX-License-Identifier: MIT */
/*
 * cryptoctl encrypt / decrypt, shared between its three files:
 * cmd_crypt.c (options, input, output), crypt_alg.c (what each algorithm
 * accepts) and crypt_op.c (the operation in the daemon).
 */
#ifndef CRYPTOCTL_CRYPT_H
#define CRYPTOCTL_CRYPT_H

#include "cryptoctl.h"

enum crypt_key {
	CRYPT_KEY_NONE, /* null: a key would suggest the output is secret */
	CRYPT_KEY_AES,	/* 16, 24 or 32 bytes */
	CRYPT_KEY_XTS,	/* 32 or 64: data key || tweak key, halves differ */
	CRYPT_KEY_ANY,	/* 1..CLI_KEY_MAX: the daemon judges (LRW) */
};

enum crypt_tag {
	CRYPT_TAG_NONE,
	CRYPT_TAG_GCM,	 /* 4, 8 or 12..16 bytes */
	CRYPT_TAG_FIXED, /* cc_alg_tag_len() bytes only */
	CRYPT_TAG_CCM,	 /* 4..16 bytes, even */
};

enum crypt_len {
	CRYPT_LEN_ANY,
	CRYPT_LEN_BLOCKS,    /* a multiple of CLI_BLOCK, 0 included */
	CRYPT_LEN_MIN_BLOCK, /* at least CLI_BLOCK (XTS: ciphertext stealing) */
};

/*
 * What encrypt and decrypt know of an algorithm (docs/algorithms.md):
 * enough to refuse a bad argument or input length with one line and exit
 * status 2 before an operation reaches the daemon. The daemon checks
 * again; these rules only make the message clear.
 */
struct crypt_rules {
	enum cc_alg alg;
	enum crypt_key key;
	enum crypt_tag tag;
	enum crypt_len len;
	unsigned iv_len;       /* the IV it needs; 0: it takes none */
	unsigned iv_max;       /* CCM: iv_len..iv_max bytes; 0: iv_len only */
	unsigned aad : 1;      /* takes --aad */
	unsigned auth_key : 1; /* needs --auth-key (authenc with HMAC) */
	unsigned mac_only : 1; /* GMAC: the output is the tag alone */
	unsigned any_iv : 1;   /* null: an IV is accepted and ignored */
};

struct crypt_args {
	const char *cmd; /* "encrypt" or "decrypt", for messages */
	enum cc_dir dir;
	const struct crypt_rules *r;
	char alg_name[40]; /* as given with -a, lower case, for messages */
	unsigned key_need; /* aes-N-...: the key length it demands; 0 = any */
	int have_key, have_auth_key, have_iv, have_tag, tag_len_set;
	int tag_out_set, tag_hex, sessionless;
	unsigned key_len, auth_key_len, iv_len, aad_len, tag_len, tag_given;
	const char *engine;
	uint8_t key[CLI_KEY_MAX];	    /* wiped by crypt_args_wipe() */
	uint8_t auth_key[CLI_AUTH_KEY_MAX]; /* likewise */
	uint8_t iv[CLI_IV_MAX];
	uint8_t tag[CLI_TAG_MAX]; /* decrypt: expected; encrypt: computed */
	uint8_t aad[CLI_AAD_MAX];
};

/* A connection and, unless --sessionless, the session holding the keys. */
struct crypt_conn {
	struct cc_conn *conn;
	uint32_t sid; /* 0 with --sessionless */
};

static inline void crypt_args_wipe(struct crypt_args *a)
{
	explicit_bzero(a->key, sizeof(a->key));
	explicit_bzero(a->auth_key, sizeof(a->auth_key));
	a->key_len = 0;
	a->auth_key_len = 0;
}

/* crypt_alg.c: each returns 0, or -EINVAL once the error is reported. */
int crypt_alg_parse(struct crypt_args *a, const char *name);
int crypt_args_check(struct crypt_args *a);
int crypt_len_check(const struct crypt_args *a, size_t len);

/* crypt_op.c */
int crypt_open(struct cli *cli, struct crypt_args *a, struct crypt_conn *c);
int crypt_do(struct crypt_conn *c, struct crypt_args *a, uint8_t *data,
	     size_t len);
void crypt_close(struct crypt_conn *c);

#endif /* CRYPTOCTL_CRYPT_H */
