/* SPDX-License-Identifier: MIT */
/*
 * cryptod's OpenSSL 3 provider: what its files share.
 *
 * One struct prov per provider instance (one per OSSL_LIB_CTX that loads
 * it; normally one per process). It owns the lazily opened connection
 * to the daemon that every thread and every context of the instance
 * shares, the configuration read from openssl.cnf, the counters, and the
 * private library context that runs fallbacks on OpenSSL's default
 * provider.
 *
 * Internal functions return 0 or -errno; the OSSL dispatch functions
 * return OpenSSL's 1 (success) / 0 (failure) and put a reason naming
 * cryptod on OpenSSL's error stack.
 */
#ifndef CRYPTOD_PROV_H
#define CRYPTOD_PROV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/evp.h>

#include <cryptoclient.h>
#include <cryptod/ring_abi.h> /* CRD_OP_MAX_LEN, CRD_AAD_MAX, CRD_TAG_MAX */

/* Reason codes of the errors the provider raises (prov.c has the texts,
 * each beginning "cryptod: "). */
enum prov_reason {
	PROV_R_UNREACHABLE = 1, /* cc_connect failed */
	PROV_R_SESSION,		/* the daemon refused the key's session */
	PROV_R_OP,		/* an op failed in the daemon */
	PROV_R_BAD_TAG,		/* authentication failed */
	PROV_R_BAD_PARAM,	/* a parameter OpenSSL would refuse too */
	PROV_R_UNSUPPORTED,	/* EVP allows it, cryptod does not (yet) */
	PROV_R_STATE,		/* called in the wrong order */
	PROV_R_FALLBACK,	/* the default provider failed the op */
	PROV_R_NOMEM,
	PROV_R_BAD_DECRYPT, /* CBC/ECB padding */
	PROV_R_GONE,	    /* the daemon went away under an op */
	PROV_R_MAX
};

/*
 * OSSL_PARAM_locate, inline, comparing a key's first byte before the
 * string. The cipher contexts' get/set_ctx_params test every key they
 * know, and run several times at every EVP_CipherInit_ex (each TLS
 * record, each openssl speed op), with one or two params: nine calls of
 * the library's function and its strcmp each were 8-11% of the program's
 * core with 1 KiB AES-GCM and async jobs.
 */
static inline OSSL_PARAM *prov_param(OSSL_PARAM *params, const char *key)
{
	for (OSSL_PARAM *p = params; p && p->key; p++)
		if (p->key[0] == key[0] && strcmp(p->key, key) == 0)
			return p;
	return NULL;
}

static inline const OSSL_PARAM *prov_param_const(const OSSL_PARAM *params,
						 const char *key)
{
	return prov_param((OSSL_PARAM *)params, key);
}

enum prov_fallback {
	PROV_FALLBACK_FAIL, /* the default: an op the daemon cannot do fails */
	PROV_FALLBACK_DEFAULT, /* ... or runs on OpenSSL's default provider */
};

/* The shared connection. Contexts hold a reference for as long as they
 * hold a session or a stream on it; a broken one is replaced, and freed
 * when its last holder lets go. */
struct prov_conn {
	struct cc_conn *cc; /* owned */
	atomic_uint refs;
	atomic_int broken;
	pthread_mutex_t lock;		       /* hash_sess */
	uint32_t hash_sess[CC_ALG_SHA512 + 1]; /* keyless digest sessions */
	unsigned forks; /* prov_fork_count() when opened: a child's parent's */
};

struct pio_q;
struct pio_stream;

/* The operations the provider offers (algorithms = ...). */
#define PROV_OP_CIPHERS 1u
#define PROV_OP_DIGESTS 2u
#define PROV_OP_MACS 4u
#define PROV_OP_ALL (PROV_OP_CIPHERS | PROV_OP_DIGESTS | PROV_OP_MACS)

struct prov {
	const OSSL_CORE_HANDLE *handle;

	/* Configuration (openssl.cnf section, else the environment). */
	char *socket; /* owned; NULL = cc_default_socket_path() */
	/* The program's name, taken at load: a program may rewrite its argv
	 * later (nginx's workers do), which program_invocation_short_name
	 * points into. */
	char name[32];
	enum prov_fallback fallback;
	size_t min_size; /* messages shorter stay in-process; 0 = none */
	unsigned ops;	 /* PROV_OP_*: what prov_query offers */

	pthread_mutex_t lock;	 /* conn, fb_libctx */
	struct prov_conn *conn;	 /* the current connection, or NULL */
	OSSL_LIB_CTX *fb_libctx; /* owned: the default provider, lazily */
	OSSL_PROVIDER *fb_default;
	int fb_failed;

	/* prov_io.c: each thread's queue (a pthread key's value) and the
	 * list of them all, under lock. */
	pthread_key_t tls_key;
	int tls_key_ok;
	struct pio_q *queues;

	/* Counters (OSSL_PROVIDER_get_params "cryptod-*"). */
	atomic_ullong n_daemon;	   /* messages run by the daemon */
	atomic_ullong n_fallback;  /* left to the default provider */
	atomic_ullong n_inprocess; /* below min_size */

	/* The counters as reported to the daemon (prov_usage.c). */
	pthread_mutex_t rep_lock;   /* the rep_ fields below */
	struct prov_conn *rep_conn; /* a reference: the one reported on */
	struct cc_usage rep_base;   /* what earlier connections took */
	struct cc_usage rep_sent;   /* what all of them took */
	atomic_ullong rep_next_ms;  /* no report from the op path before */
	atomic_int rep_off;	    /* the daemon takes no reports */

	struct prov *next_prov; /* every live instance (prov_forked) */
};

/* ---- prov.c: errors, fallback, fork() ---- */

/* The core's error functions, from OSSL_provider_init's in. */
void prov_errors_init(const OSSL_DISPATCH *in);
/* The reason strings (OSSL_FUNC_PROVIDER_GET_REASON_STRINGS). */
const OSSL_ITEM *prov_reason_items(void);

void prov_raise(const struct prov *p, const char *file, int line,
		const char *func, int reason, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
#define PROV_ERR(p, reason, ...)                                               \
	prov_raise((p), __FILE__, __LINE__, __func__, (reason), __VA_ARGS__)

/* Is err one the daemon could not serve (unreachable, algorithm or size
 * unavailable), where fallback = default may take over? */
int prov_err_fallback_ok(int err);

/* The default provider's implementation of name, from the private
 * library context (created on first use). NULL with an error raised. */
EVP_CIPHER *prov_fb_cipher(struct prov *p, const char *name);
EVP_MD *prov_fb_md(struct prov *p, const char *name);
EVP_MAC *prov_fb_mac(struct prov *p, const char *name);
/* The private context itself (the default provider), where key pairs'
 * public halves are parsed and checked (prov_pkey_*.c); NULL with an
 * error raised. */
OSSL_LIB_CTX *prov_fb_libctx(struct prov *p);
/* Random bytes from the private context's DRBG: the application's may
 * fetch its AES from this provider (-propquery provider=cryptod), and a
 * GCM IV made that way cost a session and a round trip per message.
 * 0 or -EIO. */
int prov_rand(struct prov *p, void *buf, size_t n);

/* fork()s seen in this process (an atfork handler counts them, once
 * prov_fork_watch() installed it; idempotent). */
unsigned prov_fork_count(void);
void prov_fork_watch(void);

/* ---- prov_usage.c: the counters and their reports ---- */

/* The decisions taken at the start of each message, counted: does a
 * message whose first piece is len bytes stay in-process (min_size)?
 * May a message the daemon failed with err (before any output) run on
 * the default provider instead? 1 yes, 0 no. */
int prov_small(struct prov *p, size_t len);
int prov_fallback(struct prov *p, int err);

/* Tell the daemon the counters (cc_report_usage) if they changed: from
 * the op path (prov_small, at the start of every message) at most once a
 * second, and at teardown. Connects if need be; raises no error. */
void prov_report(struct prov *p, int final);
/* Every live instance, for the atfork child handler that prov_usage_add
 * registers (every instance's locks made anew, its counters from zero:
 * the parent reports its own): add at load, remove at teardown. */
void prov_usage_add(struct prov *p);
void prov_usage_remove(struct prov *p);

/* ---- prov_conn.c: the connection and sessions ---- */

/* A reference to the current connection, opened if there is none.
 * 0 or -errno (with an error raised: PROV_R_UNREACHABLE). */
int prov_conn_get(struct prov *p, struct prov_conn **out);
void prov_conn_put(struct prov_conn *c);
/* err came from an op on c: if it says the connection is dead, c is
 * retired (the next prov_conn_get reconnects). */
int prov_conn_check(struct prov *p, struct prov_conn *c, int err);
/* The reason an op's failure raises: PROV_R_GONE when err says the
 * connection died (the daemon stopped or restarted), PROV_R_UNREACHABLE
 * when a new one found no daemon, else PROV_R_OP. */
int prov_op_reason(int err);
void prov_conn_fini(struct prov *p);

/* A session on a connection, created from a key the context keeps. */
struct prov_sess {
	struct prov_conn *conn; /* a reference, or NULL */
	uint32_t id;		/* 0 = none */
	unsigned tag_len;
	enum cc_alg alg;
};

/* Make s a session of alg with key and tag_len on the current
 * connection (reusing it when it is one already). 0 or -errno; errors
 * are not raised (the caller may fall back). */
int prov_sess_open(struct prov *p, struct prov_sess *s, enum cc_alg alg,
		   const void *key, size_t key_len, unsigned tag_len);
void prov_sess_close(struct prov_sess *s);
/* The connection's keyless session for a digest. */
int prov_hash_sess(struct prov *p, struct prov_conn **conn, enum cc_alg alg,
		   uint32_t *id);

/* ---- prov_io.c: the per-thread queues, async-aware ---- */

int prov_io_init(struct prov *p);
void prov_io_fini(struct prov *p);

/* pio_crypt's writes: the op has no output (a MAC, a digest); it has
 * (a failure leaves out zeroed); it has, and a failure leaves out as it
 * was (a decryption tried early, whose input may be out: prov_aead.c). */
enum { PIO_WRITES_NO, PIO_WRITES, PIO_WRITES_IF_OK };

/* cc_crypt() on the calling thread's queue of conn, through its arena
 * (copied in and out, no lock shared with other threads), and inside an ASYNC_JOB the job pauses while the op runs.
 * tag_len is the session's (used when tag is not NULL); writes:
 * PIO_WRITES_*. Too long an op takes cc_crypt() (which zeroes out on a
 * failure: PIO_WRITES_IF_OK callers keep such ops off this path). */
int pio_crypt(struct prov *p, struct prov_conn *conn, uint32_t session,
	      unsigned tag_len, enum cc_dir dir, const void *iv,
	      unsigned iv_len, const void *aad, size_t aad_len, const void *in,
	      void *out, size_t len, void *tag, int writes);

/* A key pair's op (cc_pk_op's arguments) on the calling thread's queue
 * of conn, through its arena: inside an ASYNC_JOB the job pauses while
 * the daemon signs, derives or decrypts. aad: an OAEP label, or none.
 * *out_len: out's room, then its bytes (none for verify). 0, a CC_ERR
 * status or -errno. */
int pio_pk(struct prov *p, struct prov_conn *conn, uint32_t session,
	   enum cc_dir dir, const struct cc_pk_params *pp, const void *in,
	   size_t in_len, const void *aad, size_t aad_len, void *out,
	   size_t *out_len);
/*
 * pio_crypt, in place in the thread's arena, leaving the output there for
 * the caller (also copied to out): an AEAD message run as one op at its
 * first update keeps its ciphertext until it is known to be whole
 * (prov_aead.c). 0 with k->buf set, a CC_ERR status or -errno with
 * nothing kept; -ENOMEM when the op does not fit the arena (take a
 * stream). The kept buffer holds the queue's reference. in NULL: len
 * zero bytes, so that a keystream cipher leaves its keystream there
 * (prov_block.c fetches CTR and ChaCha20 keystream ahead so); out may be
 * NULL.
 */
struct pio_kept {
	struct pio_q *pq; /* a reference */
	uint8_t *buf;	  /* len bytes in pq's arena */
	size_t len;
};
int pio_crypt_keep(struct prov *p, struct prov_conn *conn, uint32_t session,
		   unsigned tag_len, enum cc_dir dir, const void *iv,
		   unsigned iv_len, const void *aad, size_t aad_len,
		   const void *in, void *out, size_t len, void *tag,
		   struct pio_kept *k);
/* Give the buffer back (wiped first if it holds plaintext). */
void pio_kept_release(struct pio_kept *k, int wipe);
/*
 * Keystream ahead of need (prov_block.c): len zero bytes encrypted under
 * iv, submitted now (pio_ks_submit: 0, or -errno when the queue has no
 * room or connection; nothing waits) and taken later (pio_ks_wait: 0 with
 * k holding the keystream, as pio_crypt_keep leaves it, or a CC_ERR
 * status / -errno with nothing kept). Every ticket submitted is waited
 * for: the daemon writes into its buffer until then.
 */
struct pio_ticket {
	struct pio_q *pq; /* a reference */
	uint8_t *buf;
	size_t len;
	int slot;
};
int pio_ks_submit(struct prov *p, struct prov_conn *conn, uint32_t session,
		  const void *iv, unsigned iv_len, size_t len,
		  struct pio_ticket *t);
int pio_ks_wait(struct pio_ticket *t, struct pio_kept *k);
/* A copy of src's buffer on the same queue (EVP dupctx). 0 or -errno. */
int pio_kept_dup(const struct pio_kept *src, struct pio_kept *dst);

/* The copying stream calls (cc_stream_*), on the calling thread's queue
 * of conn; the stream stays on that queue whichever thread continues
 * it. Pieces may have any length (AEADs, digests, MACs; not CBC/ECB/XTS).
 * tag_len: the session's. */
int pio_stream_open(struct prov *p, struct prov_conn *conn,
		    const struct cc_stream_params *sp, unsigned tag_len,
		    struct pio_stream **out);
int pio_stream_update(struct pio_stream *s, const void *in, size_t len,
		      void *out, size_t *out_len);
/* tag_len: 0 for the session's; fewer bytes make or verify a tag that
 * long (CC_STREAM_TAG_LEN). */
int pio_stream_final(struct pio_stream *s, void *out, size_t *out_len,
		     void *tag, unsigned tag_len);
void pio_stream_free(struct pio_stream *s);
struct prov_conn *pio_stream_conn(const struct pio_stream *s);
/* A copy of src going on independently (EVP dupctx), on session (of the
 * same algorithm and key, on src's connection); the daemon copies the
 * running state of a started stream. 0 or -errno / a CC_ERR status. */
int pio_stream_dup(const struct pio_stream *src, uint32_t session,
		   struct pio_stream **out);

/* ---- the algorithm tables ---- */

extern const OSSL_ALGORITHM prov_ciphers[];
extern const OSSL_ALGORITHM prov_digests[];
extern const OSSL_ALGORITHM prov_macs[];

/* Cipher families in prov_cipher.c (cc_crypt-based) and prov_aead.c
 * (streams); they share the context and the parameter code. */
struct prov_cipher;

#endif
