/* SPDX-License-Identifier: MIT */
/*
 * libcryptoclient: the client side of cryptod.
 *
 * A connection (struct cc_conn) talks to the daemon's control socket. A
 * queue (struct cc_queue) is a shared-memory region the daemon creates:
 * submission ring, completion ring and a data arena. Buffers for zero-copy
 * operation are allocated from the arena with cc_buf_alloc(); ops refer to
 * them by pointer and the library turns pointers into arena offsets.
 *
 * Conventions (as in liburing): functions return 0 or a count on success
 * and a negative errno on failure; per-op results travel in completions.
 * cc_strerror() turns any such value (and any completion status) into text.
 *
 * Threading: a cc_conn may be shared between threads for control calls
 * (they are serialised internally). A cc_queue belongs to one thread at a
 * time: give each thread its own queue.
 */
#ifndef CRYPTOCLIENT_H
#define CRYPTOCLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <cryptod/algs.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CC_VERSION_MAJOR 0
#define CC_VERSION_MINOR 1

/* ---- Types ---- */

struct cc_conn;
struct cc_queue;

/* Algorithms: CC_ALG_AES_GCM, CC_ALG_NULL, CC_ALG_AES_GMAC, CC_ALG_AES_CBC,
 * ... as listed, with the key, IV and tag each takes, in <cryptod/algs.h>
 * (CC_ALG_<ID> for each row; cc_alg_name() gives its name). */
enum cc_alg {
#define CC_X(id, num, ...) CC_ALG_##id = num,
	CRD_ALGORITHMS(CC_X)
#undef CC_X
};

/* An op's direction, or for a key pair's session (CC_KIND_PKEY) its
 * operation: sign, verify, derive, and RSA-OAEP's encrypt and decrypt
 * (struct cc_pk_params; docs/asymmetric.md). */
enum cc_dir {
	CC_ENCRYPT = 1,
	CC_DECRYPT = 2,
	CC_SIGN = 3,
	CC_VERIFY = 4,
	CC_DERIVE = 5,
};

/*
 * Per-op statuses beyond -errno: CC_OK and CC_ERR_<ID> for each row of
 * CRD_STATUSES in <cryptod/algs.h> (CC_ERR_AUTH_FAILED: tag mismatch, the
 * output was zeroed; CC_ERR_POLICY: refused by cryptod's key policy, a key
 * shorter than keys.min_bits or a session-less op when keys.sessionless =
 * no; CC_ERR_ACCESS from cc_connect(): not allowed by allow_users /
 * allow_groups, where a socket file the user may not open gives -EACCES).
 * cc_strerror() gives each one's text.
 */
enum cc_status {
	CC_OK = 0,
#define CC_X(id, val, msg) CC_ERR_##id = val,
	CRD_STATUSES(CC_X)
#undef CC_X
};

struct cc_session_params {
	enum cc_alg alg;
	/* copied to the daemon, never kept by the library. A key pair's
	 * (rsa-2048 ... x448): DER, PKCS#8 PrivateKeyInfo, or
	 * SubjectPublicKeyInfo for a session that only verifies and
	 * encrypts, up to 8192 bytes; of the row's type and size, or
	 * CreateSession fails with -EINVAL. */
	const void *key;
	size_t key_len;
	const void *auth_key; /* authenc: the HMAC key; else NULL */
	size_t auth_key_len;
	unsigned tag_len; /* 0 = the algorithm's default (cc_alg_tag_len) */
	/* NULL = fastest available ("aesni", "openssl", "null"); see
	 * cc_capabilities_get() */
	const char *engine;
	/* Or a named key the daemon holds (cc_key_create): key and auth_key
	 * NULL/0, alg 0 or the key's own; the key's bytes never reach this
	 * process. key_version 0 = the newest. Not on the key's ACL (or no
	 * such key): CC_ERR_ACCESS; its usage rules allow neither direction:
	 * CC_ERR_POLICY; ops in a direction they forbid complete with
	 * CC_ERR_POLICY. */
	const char *key_name;
	uint32_t key_version;
};

/*
 * A scatter-gather segment list lives in the arena (the daemon reads it
 * there): allocate an array of n entries with cc_buf_alloc() and fill it
 * with cc_sgl_set(). At most 64 entries. Segments of one list must not
 * overlap; a destination list must be the source list itself (in place)
 * or share no byte with it.
 */
struct cc_sgl_entry {
	uint32_t off; /* arena offset: use cc_sgl_set() */
	uint32_t len;
};

/*
 * Session-less parameters, in the arena (cc_buf_alloc): algorithm and
 * keys travel with the op. The daemon copies them, expands the key for
 * that op alone and wipes its copy: every op pays a key expansion (and an
 * HMAC precomputation for authenc) that a session pays once. Wipe the
 * arena copy yourself when done.
 */
struct cc_sessionless {
	uint8_t alg; /* enum cc_alg */
	uint8_t key_len;
	uint8_t auth_key_len;
	uint8_t tag_len;   /* 0 = the algorithm's default */
	uint32_t reserved; /* zero */
	uint8_t key[64];
	uint8_t auth_key[64];
};

struct cc_queue_params {
	/* The daemon refuses other geometry with -EINVAL. */
	unsigned sq_entries; /* power of two, 8..65536; 0 = 1024 */
	unsigned
		cq_entries; /* power of two, sq_entries..65536; 0 = sq_entries */
	size_t arena_size; /* 64 KiB..1 GiB (rounded up to 4 KiB); 0 = 16 MiB */
	/* cc_submit() coalescing: publish staged single ops as one burst
	 * when this many are staged (0 = 32), ... */
	unsigned coalesce;
	/* ... or when the first staged op is this old (0 = 50 us; checked
	 * on the first and every eighth cc_submit() of a batch, and
	 * cc_poll/cc_wait/dequeue flush). */
	unsigned flush_us;
};

/*
 * IV lengths. Up to CC_IV_INLINE bytes travel in the descriptor; longer
 * ones, up to CC_IV_MAX (AES-GCM and AES-GMAC take 1..128 bytes on the
 * engines whose cc_alg_caps.iv_sizes say so: aesni and openssl, not
 * kernel), are read from the arena.
 */
#define CC_IV_INLINE 16
#define CC_IV_MAX 128

/*
 * One operation. src, dst, aad and tag must point into the queue's arena
 * (cc_buf_alloc); an IV of up to CC_IV_INLINE bytes is copied into the
 * descriptor, a longer one must point into the arena too. dst == NULL or
 * dst == src means in place; otherwise the ranges must not overlap.
 * Encrypt writes tag_len bytes (the session's) to tag; decrypt verifies
 * them.
 */
struct cc_op {
	uint64_t user_data; /* returned in the completion */
	uint32_t session;   /* 0 with sessionless */
	enum cc_dir dir; /* GMAC: CC_ENCRYPT generates, CC_DECRYPT verifies */
	const void *src;
	void *dst;
	/* Bytes; bits for the 3GPP algorithms (snow3g-*, zuc-*, kasumi-*),
	 * whose buffers then hold ceil(len / 8) bytes. */
	uint32_t len;
	const void *aad;
	uint32_t aad_len;
	void *tag;
	/* <= CC_IV_INLINE: copied, the buffer is free again once submitted;
	 * up to CC_IV_MAX: in the arena, like aad, and left alone until the
	 * op completes (the daemon copies it when it takes the op). */
	const void *iv;
	unsigned iv_len;
	/* Scatter-gather (optional): src/dst are ignored when a list is set;
	 * len is the total. dst_sgl NULL with src_sgl set means in place. */
	const struct cc_sgl_entry *src_sgl;
	unsigned src_nseg;
	const struct cc_sgl_entry *dst_sgl;
	unsigned dst_nseg;
	/* Session-less (optional): session must be 0. */
	const struct cc_sessionless *sessionless;
	/*
	 * A piece of a stream (optional; cc_stream_handle_get()): 0 = not a
	 * stream op. stream_flags: CC_STREAM_FIRST on the first piece (the
	 * only one with an IV and AAD), CC_STREAM_LAST on the last (the only
	 * one with a tag), both for a stream of one piece, 0 for a middle
	 * one. stream_param, on a FIRST that is not LAST: AES-CCM's message
	 * length (the pieces must add up to it), AES-XTS's data-unit bytes;
	 * else 0.
	 */
	uint32_t stream;
	unsigned stream_flags;
	uint32_t stream_param;
};

/* cc_op.stream_flags */
#define CC_STREAM_FIRST 1u
#define CC_STREAM_LAST 2u
/* Alone (no FIRST, no LAST): a piece of no data (len, iv, aad 0) that
 * copies the stream cc_op.stream names into a second one, whose handle
 * (taken with cc_stream_handle_get() on the same queue) is stream_param,
 * in the same state, on cc_op.session (the source's, or one of the same
 * algorithm, engine and tag length, normally with the same key): the two
 * then go on independently (a digest, MAC or AEAD duplicated in
 * mid-message). CC_ERR_STREAM_BUSY when that handle's slot is open,
 * CC_ERR_BAD_PARAM for another kind of session; the source goes on. */
#define CC_STREAM_CLONE 4u
/* With CC_STREAM_LAST: make (encrypt) or verify (decrypt) only the first
 * n bytes of the tag, 1 <= n < the session's tag length, as a one-shot
 * session of tag length n would (AES-GCM and ChaCha20-Poly1305: a tag
 * whose length is known only at the end, as OpenSSL allows; n within the
 * engine's tag sizes). Refused (CC_ERR_POLICY) on a session that may not
 * encrypt: a key that may only verify keeps its whole tag. */
#define CC_STREAM_TAG_LEN(n) (((unsigned)(n)&0xffu) << 8)

struct cc_completion {
	uint64_t user_data;
	int32_t status; /* CC_OK, CC_ERR_* or -errno */
	uint32_t len;	/* bytes written to dst (3GPP: ceil(bits / 8)) */
};

/* Completion callback for cc_poll(): called once per completion, in
 * submission order, on the thread that calls cc_poll(). */
typedef void cc_completion_fn(void *arg, const struct cc_completion *c);

struct cc_counters {
	uint64_t ops, bytes, errors, auth_failures, retries, empty_polls,
		wakeups;
};

struct cc_engine_stats {
	char name[32];
	struct cc_counters c;
};

/*
 * The daemon's service time per op: from the moment a worker claims a
 * run of descriptors to the post of their completions. Percentiles are
 * bucket upper bounds (at most 12.5% above the true value); hist is the
 * log-linear histogram they come from (cc_latency_quantile() takes the
 * difference of two snapshots, for a rate over an interval).
 */
#define CC_LAT_BUCKETS 280
struct cc_latency {
	uint64_t count, sum_ns;
	uint64_t p50_ns, p90_ns, p99_ns, p999_ns;
	uint64_t hist[CC_LAT_BUCKETS];
};

struct cc_queue_stats {
	uint32_t client_id, queue_id, pid, uid, in_flight, sessions;
	char client_name[65];
	struct cc_counters c;
	/* Runs of ops a worker took from the queue at once, by size:
	 * batch_hist[k] counts runs of 2^k .. 2^(k+1)-1 ops. */
	uint64_t batch_hist[8];
	struct cc_latency lat;
	uint64_t connected_ms; /* how long its client has been connected */
};

/* One daemon worker thread. c.empty_polls counts its passes that found
 * no work, c.wakeups the times it woke from sleeping on the doorbell. */
struct cc_worker_stats {
	uint32_t index;
	int asleep;
	struct cc_counters c;
	uint64_t passes, runs;
	struct cc_latency lat;
};

/*
 * A client's own account of its messages (cc_report_usage): totals since
 * the connection was made. An OpenSSL provider reports the messages the
 * daemon ran, those it ran on another provider because the daemon could
 * not (fallbacks), and those it kept in-process by choice (below its size
 * threshold).
 */
struct cc_usage {
	uint64_t offloaded, fallbacks, inprocess;
};

/* One connection (cc_clients_get). */
struct cc_client_info {
	uint32_t client_id, pid, uid, gid, queues, sessions, in_flight;
	char name[65];
	uint64_t connected_ms, ops, bytes, arena_bytes;
	uint32_t streams;      /* open now, over its queues */
	struct cc_usage usage; /* its latest report (the client says it) */
	int usage_reported;    /* it sent one */
};

/*
 * One program (cc_programs_get): the connections of one client name and
 * uid, open ones and, for an administrator, closed ones the daemon keeps
 * (a bounded number of programs; the rest is summed in one row with
 * other set, named "(other)", uid UINT32_MAX).
 */
struct cc_program_stats {
	char name[65];
	uint32_t uid;
	uint32_t connections, queues; /* open now */
	uint64_t connections_total;   /* since the daemon started */
	uint64_t ops, bytes, errors, auth_failures; /* its queues, all */
	struct cc_usage usage; /* the sum of what its connections reported */
	uint64_t idle_ms;      /* since its last connection closed; 0: open */
	int other;
};

/* One session (cc_sessions_get): never any key material. */
struct cc_session_info {
	uint32_t client_id, session_id, pid, uid, key_bits, tag_len;
	enum cc_alg alg;
	char engine[16];
	struct cc_counters c; /* ops, bytes, errors, auth_failures */
};

struct cc_range {
	uint32_t min, max, increment; /* increment 0: min == max */
};

/* One algorithm on one engine (cc_capabilities_get). */
struct cc_alg_caps {
	enum cc_alg alg;
	char alg_name[32];
	char engine[16];
	int available;
	char reason[128];   /* why not, when !available */
	int default_engine; /* chosen when a session names no engine */
	int sgl, sessionless;
	int stream; /* messages may span many ops (cc_stream_open) */
	struct cc_range key_sizes[4];
	unsigned n_key_sizes;
	struct cc_range auth_key_sizes[2];
	unsigned n_auth_key_sizes;
	struct cc_range iv_sizes[4];
	unsigned n_iv_sizes;
	struct cc_range tag_sizes[4];
	unsigned n_tag_sizes;
	struct cc_range aad_sizes;
	uint32_t min_len, max_len, block_size;
	/* The operator's routing names this engine for alg; routed and not
	 * available means the daemon is degraded (cryptoctl ping exits 4). */
	int routed;
};

struct cc_stats {
	uint64_t uptime_ms;
	uint32_t workers, clients, sessions;
	char poll_mode[16]; /* "adaptive" or "busy" */
	unsigned n_engines, n_queues;
	struct cc_engine_stats *engines; /* n_engines entries */
	struct cc_queue_stats *queues;	 /* n_queues entries */
	unsigned n_workers_stats;
	struct cc_worker_stats *worker_stats; /* n_workers_stats entries */
	unsigned total_queues; /* > n_queues: the reply was cut to fit */
};

/* ---- Connection and control ---- */

/* Default socket path: $CRYPTOD_SOCKET, else /run/cryptod/cryptod.sock for
 * root or when it exists (the system service), else
 * $XDG_RUNTIME_DIR/cryptod.sock, else /tmp/cryptod-$UID/cryptod.sock.
 * Writes at most len bytes; returns 0 or -ENAMETOOLONG. */
int cc_default_socket_path(char *buf, size_t len);

/* path NULL = cc_default_socket_path(). Returns 0 or -errno.
 * A connection belongs to the process that opened it: in a child of
 * fork() every call on it and its queues fails with -ECHILD (nothing
 * reaches the parent's socket or rings), and cc_disconnect() only
 * frees the child's copy. The child opens its own connection. */
int cc_connect(const char *path, const char *client_name, struct cc_conn **out);
/* Close the connection. Queues still open on it are closed too (their
 * pointers and arena buffers become invalid); the daemon wipes the
 * connection's sessions. */
void cc_disconnect(struct cc_conn *conn);

/* The daemon's explanation of the last failed control call on conn ("" if
 * it gave none); owned by conn, valid until the next call. */
const char *cc_conn_last_error(const struct cc_conn *conn);

/* The daemon's process id, from the socket's peer credentials. */
int cc_daemon_pid(const struct cc_conn *conn);

/* Daemon version string after cc_connect(); owned by conn. */
const char *cc_daemon_version(const struct cc_conn *conn);

/* Returns 0 and stores the session id, or -errno (-EINVAL bad key length). */
int cc_session_create(struct cc_conn *conn, const struct cc_session_params *p,
		      uint32_t *session_id);
int cc_session_destroy(struct cc_conn *conn, uint32_t session_id);

/* ---- Named keys (docs/keys.md) ----
 * Keys that live only in the daemon, used by name (cc_session_params.
 * key_name). Managing them (create, import, unwrap, rotate, wrap,
 * delete) needs an administrator: root or the daemon's user, else
 * CC_ERR_ACCESS. list/show give the keys the caller may use (all, for an
 * administrator). Never any key byte: export is cc_key_wrap only, of a
 * key created exportable, wrapped under a key the caller gives. Key pairs
 * (rsa-2048 .. x448, docs/asymmetric.md) too: generated by the daemon
 * (cc_key_create, key_len 0), imported (cc_key_import_pair), their public
 * half for anyone on the ACL (cc_key_pub). */
#define CC_KEY_ENCRYPT 1u
#define CC_KEY_DECRYPT 2u
#define CC_KEY_MAC_GENERATE 4u
#define CC_KEY_MAC_VERIFY 8u
#define CC_KEY_SIGN 16u	  /* key pairs: what their algorithm's row allows */
#define CC_KEY_VERIFY 32u /* (usage 0 for a key pair: all of it) */
#define CC_KEY_DERIVE 64u
#define CC_KEY_NAME_MAX 64
#define CC_KEY_IDS_MAX 16
#define CC_KEY_VERSIONS_MAX 16

struct cc_key_spec {
	const char *name;     /* [A-Za-z0-9][A-Za-z0-9._-]*, <= 64 bytes */
	enum cc_alg alg;      /* one with a single key (not authenc, digests),
			       * or a key pair's; import/unwrap of a key
			       * pair: 0 = the key's own */
	unsigned key_len;     /* bytes; import/unwrap: the key's own; a key
			       * pair: 0 */
	unsigned usage;	      /* CC_KEY_* */
	int exportable;	      /* may cc_key_wrap export it (default no) */
	const uint32_t *uids; /* who may use it: uids ... */
	unsigned nuids;
	const uint32_t *gids; /* ... or members of these groups */
	unsigned ngids;
};

struct cc_key_info {
	char name[CC_KEY_NAME_MAX + 1];
	enum cc_alg alg;
	unsigned key_len, usage;
	int exportable;
	unsigned nuids, ngids, nversions;
	uint32_t uids[CC_KEY_IDS_MAX], gids[CC_KEY_IDS_MAX];
	uint32_t versions[CC_KEY_VERSIONS_MAX]; /* oldest first */
	uint64_t created[CC_KEY_VERSIONS_MAX];	/* seconds since the epoch */
	uint64_t ops, bytes, last_use;		/* last_use: 0 = never */
};

/* Each 0 or -errno/CC_ERR_*; info (may be NULL) gets the key's facts. */
int cc_key_create(struct cc_conn *conn, const struct cc_key_spec *s,
		  struct cc_key_info *info);
int cc_key_import(struct cc_conn *conn, const struct cc_key_spec *s,
		  const void *key, size_t key_len, struct cc_key_info *info);
/* Import a key wrapped by RFC 5649 under wrapping_key (16/24/32 bytes). */
int cc_key_unwrap(struct cc_conn *conn, const struct cc_key_spec *s,
		  const void *wrapping_key, size_t wrapping_key_len,
		  const void *wrapped, size_t wrapped_len,
		  struct cc_key_info *info);
/* A key pair's private key, PEM or DER: PKCS#8, encrypted PKCS#8 (under
 * passphrase, NULL/0 for none), or the traditional RSA and EC forms, at
 * most CC_KEY_PAIR_MAX bytes; s->alg 0 or the key's own (else
 * -EINVAL and cc_conn_last_error() names both). The daemon parses it. */
#define CC_KEY_PAIR_MAX 8192
int cc_key_import_pair(struct cc_conn *conn, const struct cc_key_spec *s,
		       const void *key, size_t key_len, const void *passphrase,
		       size_t passphrase_len, struct cc_key_info *info);
/* A key pair's public key, SubjectPublicKeyInfo DER, of version (0:
 * newest) into out: its length (1024 always suffices). Allowed to anyone
 * on the key's ACL; others get CC_ERR_ACCESS, as for no such key. */
int cc_key_pub(struct cc_conn *conn, const char *name, uint32_t version,
	       void *out, size_t out_cap);
/* A new version (a key pair's: a new pair); returns its number (> 0). */
int cc_key_rotate(struct cc_conn *conn, const char *name,
		  struct cc_key_info *info);
/* RFC 5649 wrap of version (0: newest) of an exportable key (a key
 * pair's PKCS#8 DER); returns the wrapped length (at most key_len + 15 +
 * 8; 272 always suffices for a cipher's or MAC's key, 2456 for a key
 * pair). */
int cc_key_wrap(struct cc_conn *conn, const char *name, uint32_t version,
		const void *wrapping_key, size_t wrapping_key_len, void *out,
		size_t out_cap);
int cc_key_delete(struct cc_conn *conn, const char *name);
int cc_key_show(struct cc_conn *conn, const char *name,
		struct cc_key_info *info);
/* *out allocated (free with cc_key_list_free), *n entries. */
int cc_key_list(struct cc_conn *conn, struct cc_key_info **out, unsigned *n);
void cc_key_list_free(struct cc_key_info *list);

/* Every algorithm on every engine, available or not (with the reason).
 * *caps is allocated; free it with cc_capabilities_free(). Returns 0 and
 * the count in *n, or -errno. */
int cc_capabilities_get(struct cc_conn *conn, struct cc_alg_caps **caps,
			unsigned *n);
void cc_capabilities_free(struct cc_alg_caps *caps);

/* "aes-gcm", "aes-cbc-hmac-sha256", ...; NULL for unknown values. */
const char *cc_alg_name(enum cc_alg alg);
/* The inverse, also taking the kernel crypto API's names ("gcm(aes)",
 * "authenc(hmac(sha1),cbc(aes))", ...) and ours in any case; -EINVAL for
 * unknown names. */
int cc_alg_from_name(const char *name);
/* The algorithm's default tag length (GCM/GMAC 16, HMAC-SHA1 12,
 * HMAC-SHA256 16, others 0). */
unsigned cc_alg_tag_len(enum cc_alg alg);

/* What an algorithm's op does, the kind column of <cryptod/algs.h>:
 * CC_KIND_AEAD a cipher and a tag; CC_KIND_CIPHER no tag; CC_KIND_AUTHENC
 * a cipher and an HMAC with its own auth_key (ESP); CC_KIND_MAC and
 * CC_KIND_HASH authenticate only: the op's source is the message, it has
 * no destination, CC_ENCRYPT writes the tag (the MAC or digest, maybe
 * truncated) and CC_DECRYPT verifies it (CC_ERR_AUTH_FAILED), and a HASH
 * takes no key. CC_KIND_PKEY a key pair (sign, verify, derive, RSA-OAEP:
 * docs/asymmetric.md). CC_KIND_NONE for the null algorithm and unknown
 * values. */
enum cc_alg_kind {
	CC_KIND_NONE,
	CC_KIND_AEAD,
	CC_KIND_CIPHER,
	CC_KIND_AUTHENC,
	CC_KIND_MAC,
	CC_KIND_HASH,
	CC_KIND_PKEY,
};
enum cc_alg_kind cc_alg_kind(enum cc_alg alg);
/* "aead", "cipher", "authenc", "mac", "hash", "pkey" or "none". */
const char *cc_alg_kind_name(enum cc_alg_kind kind);

/* Fills *st (free it with cc_stats_free). */
int cc_stats_get(struct cc_conn *conn, struct cc_stats *st);
void cc_stats_free(struct cc_stats *st);
/* The key pair ops done since the daemon started (status OK), per key
 * pair algorithm that did any, summed over the workers: a TLS server's
 * handshakes with a daemon-held key are its signs (docs/asymmetric.md).
 * From the reply the last cc_stats_get() on conn received (no call of
 * its own); an administrator's view only, like the workers' (others, and
 * older daemons, none). Copies at most cap into out; returns how many
 * there are (at most CC_KEY_PAIR_ALGS). */
#define CC_KEY_PAIR_ALGS 16
struct cc_key_pair_ops {
	enum cc_alg alg;
	uint64_t sign, verify, derive;
	uint64_t encrypt, decrypt; /* RSA-OAEP */
};
int cc_stats_key_pairs(struct cc_conn *conn, struct cc_key_pair_ops *out,
		       unsigned cap);

/* The q-quantile (0 < q <= 1) of a CC_LAT_BUCKETS histogram, in ns; 0
 * when it is empty. */
uint64_t cc_latency_quantile(const uint64_t *hist, double q);

/*
 * Connections and sessions the daemon lets this connection see: all of
 * them for an administrator (root or the daemon's uid), else its own.
 * *out is allocated (free with free()). 0 and the count in *n, or -errno.
 */
int cc_clients_get(struct cc_conn *conn, struct cc_client_info **out,
		   unsigned *n);
int cc_sessions_get(struct cc_conn *conn, struct cc_session_info **out,
		    unsigned *n);
/* The programs this connection may see, as cc_clients_get: every one for
 * an administrator, else its own connection's. Sorted by name and uid,
 * "(other)" last. *out is allocated (free with free()). */
int cc_programs_get(struct cc_conn *conn, struct cc_program_stats **out,
		    unsigned *n);

/*
 * Tell the daemon this connection's usage totals (struct cc_usage), for
 * cryptoctl clients and stats. Totals may only grow: 0, or -EINVAL when
 * one is below the last report's (nothing is stored), -ERANGE above 2^56.
 * One control round trip: report when the numbers changed, not per op.
 */
int cc_report_usage(struct cc_conn *conn, const struct cc_usage *u);

/* ---- Queues ---- */

/* p NULL = defaults. */
int cc_queue_open(struct cc_conn *conn, const struct cc_queue_params *p,
		  struct cc_queue **out);
void cc_queue_close(struct cc_queue *q);

/* Point entry i of an arena segment list at [buf, buf + len), which must
 * lie in the arena. 0 or -EFAULT. */
int cc_sgl_set(struct cc_queue *q, struct cc_sgl_entry *sgl, unsigned i,
	       const void *buf, uint32_t len);

/* Arena buffers, 64-byte aligned. NULL when the arena is exhausted. */
void *cc_buf_alloc(struct cc_queue *q, size_t len);
void cc_buf_free(struct cc_queue *q, void *buf);
size_t cc_arena_size(const struct cc_queue *q);

/*
 * Submit up to n ops. Returns how many were accepted (0..n; fewer when the
 * ring is full), or -errno if ops[0] itself is invalid (-EFAULT: a pointer
 * outside the arena, a long IV included; -EINVAL: an IV over CC_IV_MAX)
 * or the queue is dead. Accepted ops are visible to the daemon when this
 * returns.
 */
int cc_enqueue_burst(struct cc_queue *q, const struct cc_op *ops, unsigned n);

/*
 * Single-op submission with batching hidden: the op is written into the
 * ring but published together with the next ones, when the queue's
 * coalesce count is reached, when the first staged op is flush_us old,
 * or when the caller polls, waits or dequeues. Returns 0, -EAGAIN when
 * the ring is full (take completions first), or -errno for a bad op.
 */
int cc_submit(struct cc_queue *q, const struct cc_op *op);
/* Publish every staged op now. Returns how many were staged. */
int cc_flush(struct cc_queue *q);
/* Set the callback cc_poll() delivers completions to (NULL: none). */
void cc_set_callback(struct cc_queue *q, cc_completion_fn *fn, void *arg);
/* Flush, then hand up to max completions to the callback, in order.
 * Returns how many, or -errno. */
int cc_poll(struct cc_queue *q, unsigned max);

/* Take up to n completions, in submission order. Returns the count. */
int cc_dequeue_burst(struct cc_queue *q, struct cc_completion *out, unsigned n);

/* Wait until a completion is ready or timeout_ms passes (-1 = forever):
 * spin for up to 20 us (yielding the CPU as it spins), then sleep on the
 * queue's completion doorbell.
 * Returns 1 when completions are ready, 0 on time-out, -errno on error
 * (-EPIPE when the daemon went away). */
int cc_wait(struct cc_queue *q, int timeout_ms);

/*
 * Waiting in an event loop (or an OpenSSL ASYNC_JOB) instead of cc_wait:
 * cc_wait_prepare() publishes staged ops and arms the queue's completion
 * doorbell. It returns 1 when completions are ready (dequeue them), 0
 * when armed: cc_queue_fd() becomes readable when the daemon posts a
 * completion (or goes away: call cc_wait_prepare() again, which then
 * returns -EPIPE), or -errno. The doorbell stays armed until
 * cc_wait_cancel() or the end of a cc_wait(); while it is armed the
 * daemon rings it for every batch it completes, so cancel it once
 * nobody waits. The fd belongs to the queue: do not read or close it.
 *
 * cc_wait_prepare_once() arms it for one ring: the daemon rings at the
 * first batch it completes after, and not again until the next arm. For
 * waiters that arm before every sleep (an ASYNC_JOB's pause): many
 * completions between two sleeps then cost one wake-up.
 * cc_wait_pending() says 1 when the fd is readable now (a ring not yet
 * drained) or will be at the next completion (armed once, that ring not
 * sent yet): a waiter may then sleep on the fd without arming (no system
 * call). 0: arm before sleeping.
 */
int cc_wait_prepare(struct cc_queue *q);
int cc_wait_prepare_once(struct cc_queue *q);
int cc_wait_pending(const struct cc_queue *q);
/* 1 when a completion waits (cc_dequeue_burst would return one), else
 * 0: one load of the daemon's ring index, no system call, for a waiter
 * that spins. The caller serialises it with its own dequeues, as for
 * cc_dequeue_burst. */
int cc_queue_ready(const struct cc_queue *q);
int cc_queue_fd(const struct cc_queue *q);
void cc_wait_cancel(struct cc_queue *q);

/* Ops submitted but not yet dequeued. */
unsigned cc_in_flight(const struct cc_queue *q);

/* ---- Synchronous one-shot (copies; no arena handling by the caller) ---- */

/*
 * Encrypt or decrypt one buffer: in -> out (len bytes; may alias), tag of
 * the session's tag length (NULL when it has none). Uses a small queue the
 * connection opens on first use. Returns 0, CC_ERR_AUTH_FAILED (out
 * zeroed) or another negative status / -errno. iv_len up to CC_IV_MAX
 * (the library places a long IV in the arena). For GMAC, in is the data
 * to authenticate and out is not written (may be NULL). For the 3GPP
 * algorithms len counts bits and in/out hold ceil(len / 8) bytes.
 * A message longer than 16 MiB runs as a stream (cc_stream_open) for the
 * algorithms that stream (-EOPNOTSUPP for the others, -E2BIG for XTS,
 * whose one-shot op is one data unit).
 */
int cc_crypt(struct cc_conn *conn, uint32_t session, enum cc_dir dir,
	     const void *iv, unsigned iv_len, const void *aad, size_t aad_len,
	     const void *in, void *out, size_t len, void *tag);

/*
 * ---- Key pairs: sign, verify, derive, RSA-OAEP (cc_pk.c) ----
 *
 * A session of a key pair's algorithm (CC_KIND_PKEY) takes these ops,
 * synchronous below or as any op through a queue: cc_op.dir CC_SIGN,
 * CC_VERIFY, CC_DERIVE, CC_ENCRYPT or CC_DECRYPT (RSA-OAEP), the
 * parameters a struct cc_pk_params in cc_op.iv (iv_len sizeof of it, or 0
 * for all zero), src the input (len bytes), dst room for
 * cc_alg_tag_len(alg) bytes (the longest output; none for verify), aad
 * the signature (verify) or OAEP label, tag NULL; the completion's len
 * is the output's bytes. No scatter-gather, streams or session-less ops.
 *
 *   sign    in: the digest (RSA, ECDSA: md's length; the caller hashes)
 *           or the message (Ed25519, Ed448); out: the signature.
 *   verify  in as sign's; the signature; CC_ERR_BAD_SIGNATURE when it
 *           does not verify.
 *   derive  in: the peer's public key as TLS carries it (an uncompressed
 *           EC point, X25519's and X448's raw bytes); out: the shared
 *           secret. A point off the curve: CC_ERR_BAD_PARAM.
 *   encrypt RSA-OAEP: in the message, out the ciphertext, the label.
 *   decrypt RSA-OAEP: in the ciphertext, out the message; any failure is
 *           CC_ERR_AUTH_FAILED (no padding oracle). No PKCS#1 v1.5
 *           decryption.
 * A session given a public key alone (SubjectPublicKeyInfo) verifies and
 * encrypts; other ops complete with CC_ERR_POLICY, as ops a named key's
 * usage rules forbid. An op its algorithm lacks (x25519 sign) is
 * CC_ERR_BAD_PARAM.
 */
enum cc_pk_pad {
	CC_PK_PAD_DEFAULT = 0, /* the key's own scheme; RSA: PKCS#1 v1.5
				* signatures, OAEP encryption */
	CC_PK_PAD_PKCS1 = 1,   /* RSA signatures: PKCS#1 v1.5 */
	CC_PK_PAD_PSS = 2,     /* RSA signatures: PSS, MGF1 */
	CC_PK_PAD_OAEP = 3,    /* RSA encryption: OAEP, MGF1 */
};
/* cc_pk_params.md and mgf1_md */
enum cc_pk_md {
	CC_PK_MD_NONE = 0, /* EdDSA, derives; OAEP: SHA-1; MGF1: md's */
	CC_PK_MD_SHA1,
	CC_PK_MD_SHA224,
	CC_PK_MD_SHA256,
	CC_PK_MD_SHA384,
	CC_PK_MD_SHA512,
};
/* cc_pk_params.salt_len: PSS's salt as long as the digest, or the
 * longest the key allows (verify: any length). */
#define CC_PK_SALT_DIGEST (-1)
#define CC_PK_SALT_MAX (-2)
/* An op's parameters (the ABI's struct crd_pk_params), 16 bytes. */
struct cc_pk_params {
	uint8_t pad;	 /* enum cc_pk_pad */
	uint8_t md;	 /* enum cc_pk_md: RSA and ECDSA signatures need one */
	uint8_t mgf1_md; /* PSS, OAEP: enum cc_pk_md; 0 = md's */
	uint8_t reserved0;
	int32_t salt_len;    /* PSS: bytes, or CC_PK_SALT_* */
	uint8_t reserved[8]; /* zero */
};

/*
 * One op on a key pair's session, copied in and out of the connection's
 * one-shot queue (as cc_crypt). params may be NULL (all zero); aad is the
 * signature (verify) or the OAEP label, else NULL/0; out (none for
 * verify) receives the output and *out_len, in: out's room, its bytes.
 * Returns 0, a negative status (CC_ERR_BAD_SIGNATURE, CC_ERR_AUTH_FAILED,
 * CC_ERR_BAD_PARAM, CC_ERR_POLICY, ...), or -errno (-ENOSPC: out too
 * small, nothing written; -EINVAL: bad arguments).
 */
int cc_pk_op(struct cc_conn *conn, uint32_t session, enum cc_dir op,
	     const struct cc_pk_params *params, const void *in, size_t in_len,
	     const void *aad, size_t aad_len, void *out, size_t *out_len);
/* The same, by op. */
int cc_pk_sign(struct cc_conn *conn, uint32_t session,
	       const struct cc_pk_params *params, const void *in, size_t in_len,
	       void *sig, size_t *sig_len);
int cc_pk_verify(struct cc_conn *conn, uint32_t session,
		 const struct cc_pk_params *params, const void *in,
		 size_t in_len, const void *sig, size_t sig_len);
int cc_pk_derive(struct cc_conn *conn, uint32_t session, const void *peer,
		 size_t peer_len, void *secret, size_t *secret_len);
int cc_pk_encrypt(struct cc_conn *conn, uint32_t session,
		  const struct cc_pk_params *params, const void *label,
		  size_t label_len, const void *in, size_t in_len, void *out,
		  size_t *out_len);
int cc_pk_decrypt(struct cc_conn *conn, uint32_t session,
		  const struct cc_pk_params *params, const void *label,
		  size_t label_len, const void *in, size_t in_len, void *out,
		  size_t *out_len);

/*
 * ---- Streams: messages of any length, many ops each ----
 *
 * A stream is a message that spans many ops of one queue; the daemon
 * keeps its running state (GHASH, Poly1305, CBC-MAC, hash states, the
 * chaining or counter block) between them and runs its pieces in
 * submission order, and the tag comes with the last piece. Algorithms
 * that stream: AES-GCM, ChaCha20-Poly1305, AES-CCM (its message length
 * given up front), AES-CBC, AES-CTR, AES-ECB, AES-XTS (per data unit: the
 * tweak of unit k is the IV plus k, as a 128-bit little-endian number),
 * HMAC-SHA-1/2, SHA-1/2 and AES-CMAC. Others fail with -EOPNOTSUPP.
 *
 * Zero-copy: take a handle for q with cc_stream_handle_get() and set it
 * in cc_op.stream of each piece, with cc_op.stream_flags. Pieces may have
 * any length, except CBC and ECB (whole 16-byte blocks) and XTS (whole
 * data units but the last). Each piece completes with its length, as a
 * one-shot op does (a cipher's output is as long as its input; MACs and
 * digests write nothing but the tag). Any failed piece ends
 * the stream (later pieces: CC_ERR_NO_STREAM); a bad tag on LAST zeroes
 * that piece's output only, earlier pieces' output was released already.
 * Give the handle back with cc_stream_handle_put() once the LAST piece or
 * a failed one has completed, or once its session is destroyed (which
 * ends its streams). A tag on a piece other than LAST, or stream_param on
 * one other than a FIRST that is not LAST, is refused (-EINVAL); so are
 * stream_flags without a handle. XTS pieces hold at most 4096 data units
 * (CRD_XTS_STREAM_UNITS_MAX). At most 32 streams per queue are open at
 * once, and the daemon bounds a client's total (CC_ERR_STREAM_LIMIT).
 */
int cc_stream_handle_get(struct cc_queue *q, uint32_t *handle);
void cc_stream_handle_put(struct cc_queue *q, uint32_t handle);

/* Copying streams: no arena handling by the caller. They run on a queue
 * of their own that the connection opens on first use, shared by the
 * connection's streams (serialised: one call at a time). */
struct cc_stream;

struct cc_stream_params {
	uint32_t session;
	enum cc_dir dir;
	const void *iv; /* copied; at most CC_IV_MAX bytes */
	unsigned iv_len;
	const void *aad; /* copied; at most 65535 bytes */
	size_t aad_len;
	/* AES-CCM: the message's length in bytes (required: CCM's first
	 * block encodes it); else 0. */
	uint64_t msg_len;
	/* AES-XTS: the data-unit length (16 bytes .. 1 MiB); 0 = 4096. */
	uint32_t data_unit;
};

/* 0, CC_ERR_NO_SESSION, CC_ERR_STREAM_LIMIT (a connection's copying
 * streams share one queue: at most 32 open at once) or -errno. A session
 * whose algorithm (or engine) does not stream fails with -EOPNOTSUPP at
 * its first piece: the first update or final. Free every stream before
 * cc_disconnect(). */
int cc_stream_open(struct cc_conn *conn, const struct cc_stream_params *p,
		   struct cc_stream **out);
/* The most bytes cc_stream_update(s, .., len, ..) or cc_stream_final()
 * (len 0) may write: the library holds back a partial block of CBC and
 * ECB, and a partial data unit of XTS, until more input or the end. */
size_t cc_stream_out_max(const struct cc_stream *s, size_t len);
/*
 * Process len bytes of in (any length, any number of calls); writes
 * *out_len bytes to out (room for cc_stream_out_max(s, len); NULL when
 * the algorithm writes nothing: MACs, digests). in and out may be the
 * same buffer if it has room for cc_stream_out_max(s, len) bytes. 0, or a
 * negative status or -errno, after which the stream is dead
 * (cc_stream_free is all that is left).
 */
int cc_stream_update(struct cc_stream *s, const void *in, size_t len, void *out,
		     size_t *out_len);
/*
 * End the message: process what was held back (written to out, *out_len
 * bytes, room for cc_stream_out_max(s, 0)), then the tag of the session's
 * tag length: encrypt writes it to tag, decrypt verifies it
 * (CC_ERR_AUTH_FAILED: the bytes this call wrote are zeroed; what earlier
 * calls wrote is unverified, so hold it back until this returns 0, as
 * cryptoctl decrypt does). 0 or a negative status.
 */
int cc_stream_final(struct cc_stream *s, void *out, size_t *out_len, void *tag);
/* Free s; a stream still open is abandoned (the daemon wipes its state). */
void cc_stream_free(struct cc_stream *s);

/* ---- Errors ---- */

/* Text for a negative return value or a completion status. */
const char *cc_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* CRYPTOCLIENT_H */
