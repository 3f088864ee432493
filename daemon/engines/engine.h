/* SPDX-License-Identifier: MIT */
/*
 * Engine ops table. One file per backend (engines/engine_<name>.c) fills a
 * struct engine with designated initialisers. Engines never see the
 * shared memory's descriptors: the worker hands them engine_ops built from
 * validated private copies, with pointers already bounds-checked and
 * scatter-gather already flattened.
 */
#ifndef CRYPTOD_ENGINE_H
#define CRYPTOD_ENGINE_H

#include <cryptod/compiler.h>

#include <stddef.h>
#include <stdint.h>

#include <cryptod/ring_abi.h>

struct session;

/* One validated operation. Pointers point into the queue's arena or the
 * worker's bounce buffer. */
struct engine_op {
	const struct session *sess;
	const uint8_t *src;
	uint8_t *dst; /* == src for in place; unused for GMAC */
	const uint8_t *aad;
	uint8_t *tag;
	const uint8_t *iv; /* private copy, not shared memory (iv_len up to
			    * CRD_IV_ARENA_MAX) */
	uint32_t len;	   /* bytes of src and dst; a key pair's op sets
			    * it to its output's bytes (ring_abi.h) */
	/* crd_alg_bit_len() algorithms: the length in bits (len is then
	 * its byte extent, ceil(bits / 8)); else 0. */
	uint32_t bits;
	uint32_t aad_len;
	uint8_t iv_len;
	uint8_t tag_len;
	uint8_t op;	 /* enum crd_op */
	uint8_t sgl;	 /* worker: needs gather/scatter */
	uint8_t sg_slot; /* worker, with sgl (or an arena IV): its lists (and
			  * IV) are stage.sg[sg_slot] */
	/* A stream piece (engine->stream only): ENGINE_FIRST / ENGINE_LAST
	 * bits (neither: a middle piece), and a FIRST's parameter (CCM's
	 * message length, XTS's data-unit bytes; ring_abi.h). */
	uint8_t pos;
	uint32_t param;
	int32_t status; /* out: CRD_ST_OK or an error */
};

/* engine_op.pos */
enum { ENGINE_FIRST = 1, ENGINE_LAST = 2 };

/* Bytes of engine state a stream keeps between pieces (64-byte aligned,
 * in the daemon's locked memory). */
enum { STREAM_STATE_SIZE = 448 };

/* {min, max, increment} as DPDK users know it; inc 0 means min only. */
struct range {
	uint32_t min, max, inc;
};

enum { CAP_RANGES = 4 };

/* Ops by enum crd_op: the size of a table indexed by one. */
enum { ENGINE_OP_N = CRD_OP_DERIVE + 1 };

/* What one engine does for one algorithm. */
struct alg_cap {
	uint8_t alg; /* enum crd_alg */
	uint8_t n_key, n_auth_key, n_iv, n_tag;
	struct range key[CAP_RANGES];
	struct range auth_key[CAP_RANGES];
	struct range iv[CAP_RANGES];
	struct range tag[CAP_RANGES];
	struct range aad;
	uint32_t min_len, max_len; /* bits for crd_alg_bit_len() algorithms */
	uint32_t block;		   /* data length must be a multiple; 1 = any */
	/* The engine runs it as a stream of pieces (stream.h), where the
	 * algorithm table's CRD_AF_STREAM allows: engine_streams(). */
	uint8_t stream;
	/* What one op (by enum crd_op) costs the workers' fair shares
	 * (fair.h) beyond its bytes: the bytes of symmetric work that take
	 * as long on this engine. 0 for the symmetric rows, whose cost is
	 * their bytes; a key pair's op is a fixed amount of work. */
	uint32_t cost[ENGINE_OP_N];
};

enum { ENGINE_NAME_MAX = 16, ENGINE_MAX = 6 };

struct engine {
	const char *name;
	const struct alg_cap *caps;
	unsigned n_caps;
	/* The backend's own state, for engines that share code between
	 * flavours (kernel, kernel-pcrypt); ops reach it through the engine
	 * (or a session's s->eng). */
	void *priv;
	/* Is the engine usable on this host? 0, or -errno with a reason. */
	int (*probe)(const struct engine *e, char *why, size_t why_len);
	/*
	 * Expand the key material into s->key (the session's locked slot).
	 * Parameters are already checked against the capability table.
	 * wctx is the calling worker's context (session-less ops), or NULL
	 * on the control thread. 0 or -EINVAL.
	 */
	int (*session_init)(struct session *s, void *wctx, const uint8_t *key,
			    size_t key_len, const uint8_t *auth_key,
			    size_t auth_key_len);
	/* Per-worker state (an IMB_MGR for aesni); NULL on failure. */
	void *(*worker_init)(const struct engine *e);
	void (*worker_fini)(void *wctx);
	/* Run n ops; set each op's status. Never fails as a whole. No
	 * allocation, lock or syscall per op, but for the key pairs' rows,
	 * whose ops cost a thousand allocations each (openssl_pkey.c). */
	void (*process)(void *wctx, struct engine_op *ops, unsigned n);
	/* Release what probe set up (optional). */
	void (*fini)(void);
	/* Release what session_init made besides key bytes (optional; the
	 * kernel engine's AF_ALG sockets). Called once no worker can see s. */
	void (*session_fini)(struct session *s);
	/* Why alg is unavailable on an available engine, or NULL (optional:
	 * the kernel engine probes every algorithm separately). */
	const char *(*alg_unavailable)(const struct engine *e, unsigned alg);
	/* Session-less ops are refused (setting a key costs a socket). */
	int no_sessionless;
	/*
	 * Streams (optional; NULL: none): run one piece (op->pos) with the
	 * stream's state (STREAM_STATE_SIZE bytes, zeroed before FIRST);
	 * sets op->status. Which algorithms stream is engine_streams()'s
	 * answer, from the rows. The caller runs a stream's pieces one at a
	 * time, in order, and wipes the state after LAST or any error. The
	 * contract in full is daemon/engines/stream.h.
	 */
	void (*stream)(void *wctx, struct engine_op *op, void *state);
};

extern const struct engine engine_aesni;
extern const struct engine engine_openssl;
extern const struct engine engine_null;
extern const struct engine engine_kernel;
extern const struct engine engine_kernel_pcrypt;

/*
 * How the kernel-pcrypt engine finds pcrypt instances: off; auto (the
 * default: cryptoshim.ko's, else ones that already exist); create (as
 * auto, else make them over crypto_user netlink, which needs
 * CAP_NET_ADMIN). algs: comma list of kernel AEAD names to parallelise
 * ("gcm(aes),authenc(hmac(sha1),cbc(aes))"); NULL or "" = every AEAD the
 * engine serves. Call before engine_probe_all(); the string is copied.
 */
enum kernel_pcrypt_mode { KPCRYPT_OFF, KPCRYPT_AUTO, KPCRYPT_CREATE };
void engine_kernel_configure(enum kernel_pcrypt_mode mode, const char *algs);

/* Registry (engine.c). Index is stable for the process lifetime. */
unsigned engine_count(void);
const struct engine *engine_get(unsigned idx);
/* Probe every engine at start-up; returns the count usable. */
CRD_MUST_CHECK int engine_probe_all(void);
void engine_fini_all(void);
int engine_available(unsigned idx);
const char *engine_unavailable_why(unsigned idx);
/* Engine idx is available and serves alg; else *why (if given) says why. */
int engine_alg_available(unsigned idx, unsigned alg, const char **why);
/* The capability of engine idx for alg, or NULL. */
const struct alg_cap *engine_cap(unsigned idx, unsigned alg);
/* Does e run alg as a stream? The algorithm table says it can stream
 * (CRD_AF_STREAM), e has a stream hook, and e's row for alg says so. */
int engine_streams(const struct engine *e, unsigned alg);
/* name NULL or "" = the first (fastest) available engine for alg.
 * Returns index or -errno (-ENOENT unknown name, -EOPNOTSUPP alg not
 * supported, -ENODEV engine unavailable). */
CRD_MUST_CHECK int engine_select(unsigned alg, const char *name);

/*
 * Operator routing (config file / command line): sessions of alg that name
 * no engine go to engine name while it is available; otherwise the usual
 * fastest-first choice. name NULL or "" removes the route. Call before
 * workers start or under the control thread. 0, -EINVAL (alg),
 * -ENOENT (no such engine), -EOPNOTSUPP (engine lacks alg).
 */
CRD_MUST_CHECK int engine_route_set(unsigned alg, const char *name);
/* The routed engine's name for alg, or NULL. */
const char *engine_route_get(unsigned alg);

/* The first available engine for alg that takes session-less ops, or
 * -ENODEV: where session-less ops go when routing names one that does not. */
CRD_MUST_CHECK int engine_select_sessionless(unsigned alg);

/* After engine_select() said -ENODEV: the reason of the first engine
 * (named name, if given) that has alg but cannot serve it now, and that
 * engine's name in *eng; NULL if none. */
const char *engine_select_why(unsigned alg, const char *name, const char **eng);

/* Is v in one of the n ranges? */
int range_has(const struct range *r, unsigned n, uint32_t v);

/* Algorithm names as users see them ("aes-gcm", ...); NULL if unknown.
 * The inverse is crd_alg_from_name() (proto/names.h). */
const char *alg_name(unsigned alg);

/* Constant-time comparison: 0 when equal. */
int engine_ct_memcmp(const void *a, const void *b, size_t n);

/* Zero ENGINE_BURN_STACK bytes of stack below the caller's frame: for
 * library calls that leave key bytes in their dead frames (OpenSSL 3.0's
 * HMAC set-up leaves a 32- or 64-byte key; measured, it uses ~1 KiB), as
 * libgcrypt's burn_stack does. Call it from the frame that made those
 * calls, or one further up. */
enum { ENGINE_BURN_STACK = 8192 };
__attribute__((noinline)) void engine_burn_stack(void);
/* The same for the n bytes (at most ENGINE_BURN_STACK) just below. */
__attribute__((noinline)) void engine_burn_stack_n(size_t n);
/* Zero the vector registers, which the crypto libraries leave holding
 * state (a hash's words, counter blocks) that anything saving them later
 * (a signal frame) would write to memory. */
void engine_clear_vector_regs(void);

/* Capability-table shorthands for engine files. */
#define RANGE1(v)                                                              \
	{                                                                      \
		(v), (v), 0                                                    \
	}
#define KEYS_AES .n_key = 1, .key = { { 16, 32, 8 } }
#define NO_IV .n_iv = 1, .iv = { RANGE1(0) }
#define NO_TAG .n_tag = 1, .tag = { RANGE1(0) }
/* Shared capability rows, so engines that offer the same thing say it the
 * same way. */
#define CAP_IVS(lo, hi)                                                        \
	.n_iv = 1, .iv = { { (lo), (hi), (lo) == (hi) ? 0 : 1 } }
/* A block-cipher mode: AES keys, one IV size, no tag, no AAD. */
#define CAP_AES_MODE(a, iv_, blk_)                                             \
	{                                                                      \
		.alg = (a), KEYS_AES, CAP_IVS(iv_, iv_), NO_TAG,               \
		.aad = RANGE1(0), .min_len = 0, .max_len = CRD_OP_MAX_LEN,     \
		.block = (blk_), .stream = 1                                   \
	}
/* GCM (AAD up to aad_max) or GMAC (aad_max 0: the data is the AAD);
 * stream_ 1 if the engine streams it. */
#define CAP_AES_GCM(a, iv_lo, iv_hi, aad_max, stream_)                         \
	{                                                                      \
		.alg = (a), KEYS_AES, CAP_IVS(iv_lo, iv_hi), GCM_TAGS,         \
		.aad = { 0, (aad_max), (aad_max) ? 1 : 0 }, .min_len = 0,      \
		.max_len = CRD_OP_MAX_LEN, .block = 1, .stream = (stream_)     \
	}
/* CBC with a null digest: CBC that takes (and ignores) AAD. */
#define CAP_AES_CBC_NULL                                                       \
	{                                                                      \
		.alg = CRD_ALG_AES_CBC_NULL, KEYS_AES, CAP_IVS(16, 16),        \
		NO_TAG, .aad = { 0, CRD_AAD_MAX, 1 }, .min_len = 0,            \
		.max_len = CRD_OP_MAX_LEN, .block = 16                         \
	}
/* authenc (IPsec ESP style): AES keys, an HMAC key of 1..64 bytes, the
 * 16-byte IV (CBC's, or CTR's whole counter block), the table's ICV
 * length, any AAD; blk_ 16 for CBC, 1 for CTR. id: the table's ID. */
#define CAP_AES_AUTHENC(id, blk_)                                              \
	{                                                                      \
		.alg = CRD_ALG_##id, KEYS_AES, .n_auth_key = 1,                \
		.auth_key = { { 1, CRD_AUTH_KEY_MAX, 1 } }, CAP_IVS(16, 16),   \
		.n_tag = 1, .tag = { RANGE1(CRD_TAG_##id) },                   \
		.aad = { 0, CRD_AAD_MAX, 1 }, .min_len = 0,                    \
		.max_len = CRD_OP_MAX_LEN, .block = (blk_)                     \
	}
/* Every authenc row, as the aesni and openssl engines offer them: CBC
 * with HMAC-SHA1/256/384/512 (ICV 12/16/24/32), CTR with HMAC-SHA1/256. */
#define CAP_AES_AUTHENC_ROWS                                                   \
	CAP_AES_AUTHENC(AES_CBC_HMAC_SHA1, 16),                                \
		CAP_AES_AUTHENC(AES_CBC_HMAC_SHA256, 16),                      \
		CAP_AES_AUTHENC(AES_CBC_HMAC_SHA384, 16),                      \
		CAP_AES_AUTHENC(AES_CBC_HMAC_SHA512, 16),                      \
		CAP_AES_AUTHENC(AES_CTR_HMAC_SHA1, 1),                         \
		CAP_AES_AUTHENC(AES_CTR_HMAC_SHA256, 1)
/* RFC 4106: AES key || salt, 8-byte IV, AAD = SPI || 32/64-bit seq. */
#define CAP_AES_GCM_RFC4106(max_)                                              \
	{                                                                      \
		.alg = CRD_ALG_AES_GCM_RFC4106, .n_key = 1,                    \
		.key = { { 20, 36, 8 } }, CAP_IVS(8, 8), .n_tag = 1,           \
		.tag = { { 8, 16, 4 } }, .aad = { 8, 12, 4 }, .min_len = 0,    \
		.max_len = (max_), .block = 1                                  \
	}
/* AES-CCM (SP 800-38C): nonce 7..13, tags 4..16 even; keys, AAD and
 * length as the engine takes them (aesni's are narrower: aesni_aead.c);
 * stream_ 1 if the engine streams it. */
#define CAP_AES_CCM(key_inc, aad_max, max_, stream_)                           \
	{                                                                      \
		.alg = CRD_ALG_AES_CCM, .n_key = 1,                            \
		.key = { { 16, 32, (key_inc) } }, CAP_IVS(7, 13), .n_tag = 1,  \
		.tag = { { 4, 16, 2 } }, .aad = { 0, (aad_max), 1 },           \
		.min_len = 0, .max_len = (max_), .block = 1,                   \
		.stream = (stream_)                                            \
	}
/* RFC 8439 ChaCha20-Poly1305: key 32, nonce 12, the full 16-byte tag;
 * stream_ 1 if the engine streams it. */
#define CAP_CHACHA20_POLY1305(stream_)                                         \
	{                                                                      \
		.alg = CRD_ALG_CHACHA20_POLY1305, .n_key = 1,                  \
		.key = { RANGE1(32) }, CAP_IVS(12, 12), .n_tag = 1,            \
		.tag = { RANGE1(16) }, .aad = { 0, CRD_AAD_MAX, 1 },           \
		.min_len = 0, .max_len = CRD_OP_MAX_LEN, .block = 1,           \
		.stream = (stream_)                                            \
	}
#define GCM_TAGS .n_tag = 3, .tag = { RANGE1(4), RANGE1(8), { 12, 16, 1 } }

#endif
