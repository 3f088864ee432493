/* SPDX-License-Identifier: MIT */
/*
 * The measuring core of cryptoctl bench's throughput modes (the front end
 * is cli/cmd_bench.c): the daemon path (libcryptoclient, zero-copy, across
 * a process boundary) measured side by side with the in-process engine the
 * daemon's engine wraps (intel-ipsec-mb's direct GCM/GMAC API or its
 * multi-buffer job API, or OpenSSL EVP), and OpenSSL EVP, alternating the
 * paths round by round so that the noise of a shared machine hits every
 * path alike.
 *
 * Files: bench_opts.c (the options, one at a time), bench_alg.c (the
 * algorithm table), bench_layout.c (where each op's bytes live),
 * bench_daemon.c (the daemon path), bench_ref.c (in-process paths: the
 * common loop, copy reference), bench_ref_imb.c (ipsec-mb),
 * bench_ref_ossl.c (OpenSSL), bench_verify.c (the output check before
 * timing), bench_run.c (per algorithm and size: keys, sessions, binding,
 * verification), bench_report.c (medians, notes, the daemon's counters),
 * and for every mode bench_spawn.c (the one daemon spawner), bench_env.c
 * (the one environment capture) and bench_sheet.h (results as sheets for
 * the one report writer).
 */
#ifndef CRYPTOD_BENCH_H
#define CRYPTOD_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "cryptoclient.h"
#include <cryptod/clock.h>

/* All bounds of the bench's options live here. */
enum bench_limits {
	BENCH_MAX_SIZES = 64,
	BENCH_MAX_ALGS = 64,
	BENCH_MAX_BURST = 1024,
	BENCH_MAX_DEPTH = 64,
	BENCH_MAX_ROUNDS = 101,
	BENCH_MAX_TIME_MS = 60000,
	BENCH_MAX_AAD = 1024,
	BENCH_MAX_WORKERS = 256,
	BENCH_TAG_MAX = 64, /* a SHA-512 digest */
	BENCH_IV_MAX = 16,
	BENCH_KEY_MAX = 64,	 /* XTS-256: two 32-byte halves */
	BENCH_AUTH_KEY_MAX = 64, /* one HMAC block */
	BENCH_SLOT_ALIGN = 64,
	BENCH_PATH_MAX = 108, /* sun_path */
	BENCH_ENGINE_MAX = 16,
};

/* One benchmarked algorithm: a cc_alg with its key size fixed. */
struct bench_alg {
	const char *name; /* "aes-128-cbc-hmac-sha1" */
	enum cc_alg alg;
	uint8_t key_len, auth_key_len, tag_len, iv_len;
	uint16_t block;	  /* data lengths must be a multiple of this */
	uint16_t min_len; /* and at least this */
	bool aad;	  /* takes AAD (GCM, authenc); others get none */
	bool tag_only;	  /* GMAC, MACs, digests: the data is read, only the
			   * tag written */
	bool bits;	  /* 3GPP: the op's length counts bits */
	uint32_t max_len; /* the longest op in bytes; 0: any */
	/* Extra sizes measured when --sizes is not given (XTS: dm-crypt's
	 * 4 KiB sector; 512 B is in the default list already). */
	uint32_t extra_size;
};

/* bench_alg.c */
unsigned bench_alg_count(void);
const struct bench_alg *bench_alg_at(unsigned i);
const struct bench_alg *bench_alg_find(const char *name);
static inline bool bench_alg_len_ok(const struct bench_alg *a, uint32_t len)
{
	return len >= a->min_len && len % a->block == 0 &&
	       (!a->max_len || len <= a->max_len);
}
/* CBC encryption proper, where OpenSSL's serial CBC is the second
 * reference (plain CBC and CBC with a null digest). */
bool bench_alg_is_cbc(const struct bench_alg *a);

struct bench_cfg {
	char socket[BENCH_PATH_MAX];
	const char *spawn;     /* cryptod binary to start, or NULL */
	unsigned workers;      /* --workers for the spawned daemon */
	const char *poll_mode; /* its --poll-mode, NULL: its default */
	const char *engine;    /* daemon engine name, NULL = its choice */
	const struct bench_alg *algs[BENCH_MAX_ALGS];
	unsigned n_algs;
	bool all; /* --alg all: skip what the daemon cannot serve */
	enum cc_dir dir;
	uint32_t sizes[BENCH_MAX_SIZES];
	unsigned n_sizes;
	bool sizes_set; /* --sizes given: no per-algorithm extras */
	unsigned burst; /* ops per enqueue and per in-process burst */
	unsigned depth; /* bursts kept in flight on the daemon path */
	unsigned
		ring; /* SQ entries; 0 = smallest power of two >= burst*depth */
	unsigned rounds;  /* A B pairs per size */
	unsigned time_ms; /* per measurement */
	unsigned aad_len; /* for the algorithms that take AAD */
	int cpu;	  /* pin the client thread here; -1 = no pinning */
	bool oop;	  /* out of place (decrypt is always out of place) */
	bool touch;	  /* the client writes each payload before submitting it
			   * and reads each result, as an application would */
	bool inproc;	  /* run the in-process paths */
	bool dpdk;	  /* and DPDK's PMD among them, when there */
	bool submit;	  /* the cryptod-submit path (cc_submit/cc_poll) */
	bool csv;
	bool ossl_all; /* time OpenSSL (path C) for every algorithm */
	bool smoke;
	bool verbose; /* note every round's figures */
};

/*
 * bench_opts.c: the throughput options for the front end (cryptoctl
 * bench): the long options table (values enum bench_opt), the defaults,
 * one option at a time, and the checks and derived values once all are
 * in.
 */
enum bench_opt {
	OPT_SOCKET = 256,
	OPT_SPAWN,
	OPT_WORKERS,
	OPT_POLL_MODE,
	OPT_ALG,
	OPT_ENGINE,
	OPT_DIR,
	OPT_OOP,
	OPT_SIZES,
	OPT_AAD,
	OPT_BURST,
	OPT_DEPTH,
	OPT_RING,
	OPT_ROUNDS,
	OPT_TIME,
	OPT_CPU,
	OPT_TOUCH,
	OPT_NO_INPROC,
	OPT_NO_DPDK,
	OPT_SUBMIT,
	OPT_CSV,
	OPT_SMOKE,
	OPT_VERBOSE,
	OPT_HELP,
	OPT_BENCH_END_, /* front ends number their own options from here */
};
extern const struct option bench_long_opts[]; /* ends with a NULL entry */
/* An unsigned option value in [min, max]: 0, or -EINVAL (message
 * printed: "--opt: 'v' is not in [min, max]"). */
int bench_parse_uint(const char *opt, const char *s, unsigned min, unsigned max,
		     unsigned *out);
/* Options given explicitly win over --smoke whatever their order. */
struct bench_opts_set {
	bool sizes, rounds, time;
};
void bench_cfg_init(struct bench_cfg *cfg, struct bench_opts_set *set);
/* 0, 1 (--alg help: listed), or -EINVAL (message printed). */
int bench_opts_one(struct bench_cfg *cfg, struct bench_opts_set *set, int c,
		   const char *arg);
int bench_cfg_finish(struct bench_cfg *cfg, const struct bench_opts_set *set);

/* The program name error messages start with ("cryptoctl: bench"). */
extern const char *bench_prog;
void bench_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The sizes measured for a: the list (plus a's extra size when --sizes
 * was not given), minus those a cannot take. Returns the count. */
unsigned bench_alg_sizes(const struct bench_cfg *cfg, const struct bench_alg *a,
			 uint32_t *out);
/* AAD bytes a gets under cfg. */
static inline unsigned bench_aad_len(const struct bench_cfg *cfg,
				     const struct bench_alg *a)
{
	return a->aad ? cfg->aad_len : 0;
}

/*
 * Where the bytes of op slot i live, for one buffer size. Each slot is
 * [aad | payload | tag] packed, the slot start 64-byte aligned, like an
 * ESP packet with its ICV. Out-of-place destinations are a second packed
 * block of [aad copy | payload] slots: the copy makes AAD || ciphertext
 * contiguous at the destination too, which ipsec-mb's one-job ESP needs.
 * All paths use the same geometry: path A inside the queue's arena, the
 * in-process paths in private memory.
 */
struct bench_layout {
	uint32_t len, aad_len, tag_len, iv_len;
	size_t stride, dst_stride; /* bytes between slots */
	unsigned nslots;
	bool oop;
	bool tag_only; /* GMAC: nothing but the tag is written */
	bool bits;     /* 3GPP: ops' lengths are len * 8 bits */
	uint8_t *src;  /* nslots * stride; owned by whoever made the block */
	uint8_t *dst;  /* nslots * dst_stride when oop, else == src */
	uint8_t (*iv)[BENCH_IV_MAX]; /* nslots IVs, private memory */
};

/* bench_layout.c */
size_t bench_layout_stride(uint32_t len, uint32_t aad_len, uint32_t tag_len);
size_t bench_layout_dst_stride(uint32_t len, uint32_t aad_len);
/* The largest source (or destination) slot of any selected algorithm and
 * size: what each block is sized for. */
size_t bench_layout_max_stride(const struct bench_cfg *cfg, bool dst);
void bench_layout_set(struct bench_layout *l, uint32_t len,
		      const struct bench_cfg *cfg, const struct bench_alg *a,
		      unsigned nslots);
static inline uint8_t *bench_slot_aad(const struct bench_layout *l, unsigned i)
{
	return l->src + (size_t)i * l->stride;
}
static inline uint8_t *bench_slot_src(const struct bench_layout *l, unsigned i)
{
	return l->src + (size_t)i * l->stride + l->aad_len;
}
static inline uint8_t *bench_slot_tag(const struct bench_layout *l, unsigned i)
{
	return l->src + (size_t)i * l->stride + l->aad_len + l->len;
}
static inline uint8_t *bench_slot_dst(const struct bench_layout *l, unsigned i)
{
	return l->oop ? l->dst + (size_t)i * l->dst_stride + l->aad_len
		      : bench_slot_src(l, i);
}
/* Fill AAD, payload and IVs with a deterministic pattern for this size:
 * two layouts of the same geometry get the same bytes. */
void bench_layout_fill(const struct bench_layout *l);

/* One measurement. */
struct bench_sample {
	uint64_t ops, bytes;
	uint64_t retries, empty_polls; /* daemon path only */
	double secs;
};

/*
 * In-process engines (bench_ref*.c): a small ops table per kind, like the
 * daemon's engines. A reference processes whole slots of a layout, so the
 * same code both times the in-process path and produces the results the
 * daemon's are compared with.
 */
enum bench_ref_kind {
	BENCH_REF_IMB,	/* ipsec-mb: direct GCM/GMAC API, else job API */
	BENCH_REF_OSSL, /* OpenSSL EVP, one buffer after another */
	BENCH_REF_COPY, /* the null algorithm: memcpy */
	BENCH_REF_DPDK, /* DPDK's cryptodev software PMDs: a plugin */
};

struct bench_ref_ops {
	/* 0, -ENOTSUP (this kind cannot do a) or -errno. */
	int (*create)(const struct bench_alg *a, const uint8_t *key,
		      const uint8_t *auth_key, void **priv, char *desc,
		      size_t desc_len);
	void (*destroy)(void *priv);
	/* Slots [first, first + n) of l. checked: validate what the library
	 * can (verification), else its fastest call. Returns the number of
	 * decrypt tags that did not verify, or -errno. */
	int (*burst)(void *priv, const struct bench_layout *l, enum cc_dir dir,
		     unsigned first, unsigned n, bool checked);
};

extern const struct bench_ref_ops bench_ref_imb_ops;
extern const struct bench_ref_ops bench_ref_ossl_ops;
extern const struct bench_ref_ops bench_ref_copy_ops;

struct bench_ref {
	const struct bench_ref_ops *ops; /* NULL: not created */
	void *priv;			 /* owned */
	enum bench_ref_kind kind;
	char desc[96]; /* "intel-ipsec-mb 1.3.0 job API (avx2)" */
};

/*
 * bench_ref_dpdk.c: the DPDK path is a plugin (bench/dpdk/, built when
 * Debian's libdpdk-dev is there), so that cryptoctl does not link DPDK:
 * bench_dpdk_ops() dlopens it on first use ($CRYPTOD_BENCH_DPDK, beside
 * the build tree's cryptoctl, or the installed plugin directory) and
 * returns its ops, or NULL with the reason in why.
 */
#define BENCH_DPDK_ABI 1
struct bench_dpdk_plugin {
	unsigned abi; /* BENCH_DPDK_ABI */
	const struct bench_ref_ops *ops;
	void (*fini)(void); /* the EAL down, at exit */
};
const struct bench_ref_ops *bench_dpdk_ops(char *why, size_t why_len);
/* The largest op the path takes (an mbuf's 16-bit buffer length). */
enum { BENCH_DPDK_MAX_LEN = 65535 };

/* bench_ref.c */
int bench_ref_create(struct bench_ref *r, enum bench_ref_kind kind,
		     const struct bench_alg *a, const uint8_t *key,
		     const uint8_t *auth_key);
void bench_ref_destroy(struct bench_ref *r);
static inline int bench_ref_burst(struct bench_ref *r,
				  const struct bench_layout *l, enum cc_dir dir,
				  unsigned first, unsigned n, bool checked)
{
	return r->ops->burst(r->priv, l, dir, first, n, checked);
}
/* Encrypt every slot in place and write its tag, so that decrypt has
 * valid ciphertext and tags to chew on. 0 or -errno. */
int bench_ref_seal(struct bench_ref *r, const struct bench_layout *l);
/* Run bursts over the slots for time_ms. Returns 0, or -EBADMSG when a
 * decrypt tag did not verify (the layout is broken), or -errno. */
int bench_ref_run(struct bench_ref *r, const struct bench_layout *l,
		  enum cc_dir dir, unsigned burst, bool touch, unsigned time_ms,
		  struct bench_sample *out);
/* The in-process engine that mirrors a daemon engine. */
enum bench_ref_kind bench_ref_kind_for(const char *engine,
				       const struct bench_alg *a);

/* bench_ref_imb.c */
const char *bench_imb_version(void);
const char *bench_imb_arch_name(void);

/* bench_daemon.c: path A. */
struct bench_daemon {
	struct cc_conn *conn;
	struct cc_queue *q;
	uint32_t session;
	bool have_session;
	uint8_t *src_block;	     /* arena; owned by q */
	uint8_t *dst_block;	     /* arena; owned by q; NULL when in place */
	struct cc_op *ops;	     /* nslots prebuilt ops; owned here */
	struct cc_completion *comps; /* nslots, reused */
	unsigned nslots, ring;
	struct bench_layout l;	  /* the bound size's geometry */
	struct cc_alg_caps *caps; /* the daemon's table; owned, may be NULL */
	unsigned n_caps;
};
/* Connection, queue and arena blocks for every algorithm and size. */
int bench_daemon_open(struct bench_daemon *d, const struct bench_cfg *cfg);
void bench_daemon_close(struct bench_daemon *d);
/*
 * The engine that serves a: cfg->engine when given, else the daemon's
 * default. 0 with the name in engine, or -ENOTSUP with the daemon's
 * reason in why.
 */
int bench_daemon_engine(const struct bench_daemon *d,
			const struct bench_cfg *cfg, const struct bench_alg *a,
			char *engine, size_t engine_len, char *why,
			size_t why_len);
int bench_daemon_session(struct bench_daemon *d, const struct bench_cfg *cfg,
			 const struct bench_alg *a, const uint8_t *key,
			 const uint8_t *auth_key);
void bench_daemon_session_end(struct bench_daemon *d);
/* Point the layout's blocks into the arena for this size and build ops. */
void bench_daemon_bind(struct bench_daemon *d, struct bench_layout *l,
		       enum cc_dir dir);
/* Submit slots [0, n) once and wait for them (verification). Returns 0, or
 * -errno (message printed); statuses in status_out. */
int bench_daemon_run_once(struct bench_daemon *d, unsigned n,
			  int32_t *status_out);
int bench_daemon_run(struct bench_daemon *d, const struct bench_cfg *cfg,
		     unsigned time_ms, struct bench_sample *out);
/* The same ops one at a time through cc_submit(), completions through
 * cc_poll()'s callback (the cryptod-submit path). */
int bench_daemon_run_submit(struct bench_daemon *d, const struct bench_cfg *cfg,
			    unsigned time_ms, struct bench_sample *out);

/* bench_verify.c: before timing a size, the daemon's output for one burst
 * must equal the reference's; the reference, OpenSSL's (cross, may be
 * NULL). la/lb/lx: the same geometry and bytes in the arena, for ref, for
 * cross. 0, or -EBADMSG / -errno (message printed). */
struct bench_verify {
	struct bench_daemon *d;
	struct bench_ref *ref, *cross;
	const struct bench_layout *la, *lb, *lx;
	enum cc_dir dir;
	unsigned n;
	int32_t *status; /* n entries, scratch */
	const char *alg;
};
int bench_verify_size(const struct bench_verify *v);
/* Outputs of slots [0, n) of two layouts of the same geometry: data
 * (unless GMAC) and, on encrypt, tags. 0, or -EBADMSG (the first
 * difference printed). */
int bench_compare_outputs(const char *alg, enum cc_dir dir, unsigned n,
			  const struct bench_layout *x,
			  const struct bench_layout *y, const char *xname,
			  const char *yname);

/* bench_spawn.c: the one way every mode starts a private daemon. */
struct bench_spawn_opts {
	const char *bin;
	unsigned workers;      /* 0: 1 */
	int avoid_cpu;	       /* >= 0: our CPUs but this one; -1: ours */
	bool all_cpus;	       /* every online CPU instead */
	const char *poll_mode; /* --poll-mode, NULL: the daemon's default */
	unsigned spin_us;      /* --spin-us, 0: the daemon's default */
	const char *log_level; /* --log-level, NULL: the default */
	bool pin;	       /* --pin */
	const char *dir;  /* where the socket and log go; NULL: a temp dir of
			   * its own, removed at stop */
	const char *name; /* NAME.sock, NAME.log; NULL: "cryptod" */
};
struct bench_spawn {
	int pid; /* 0: not running */
	bool own_dir;
	char dir[64];
	char sock[BENCH_PATH_MAX];
	char log[BENCH_PATH_MAX];
	char what[160]; /* the command, for messages */
};
/* 0 once the socket accepts, or -errno (the log shown). */
int bench_spawn_start(struct bench_spawn *s, const struct bench_spawn_opts *o);
/* SIGTERM, wait; the exit status (0 expected; otherwise the log shown)
 * or -errno. The socket and log are removed. */
int bench_spawn_stop(struct bench_spawn *s);
void bench_spawn_show_log(const struct bench_spawn *s);

/* bench_env.c: the one environment capture of every mode. start prints
 * the machine (CPU model, the flags that matter, ipsec-mb's code path)
 * and how idle it was just before; pids are the processes whose CPU time
 * counts as ours (the daemons; may be 0 entries). */
struct bench_env {
	bool ok;
	unsigned long long idle0, total0, ours0; /* clock ticks */
};
void bench_env_start(struct bench_env *e, FILE *out, const int *pids,
		     unsigned n);
/* The same baseline, silently: a section's own share of others. */
void bench_env_mark(struct bench_env *e, const int *pids, unsigned n);
/* Percent of all CPU time other processes used since start; -1 unknown. */
double bench_env_others(const struct bench_env *e, const int *pids, unsigned n);
/* "Machine: other processes used N% ... during <during>". */
void bench_env_end(const struct bench_env *e, FILE *out, const int *pids,
		   unsigned n, const char *during);
static inline FILE *bench_note_out(const struct bench_cfg *cfg)
{
	return cfg->csv ? stderr : stdout;
}

/* bench_report.c */
double bench_median(double *v, unsigned n); /* sorts v */
void bench_sort(double *v, unsigned n);
/* v sorted; p in [0, 100]: the nearest-rank percentile. */
double bench_percentile_sorted(const double *v, unsigned n, double p);
void bench_report_daemon_stats(const struct bench_cfg *cfg,
			       struct cc_conn *conn, const char *client_name);
/* How many ops the daemon's worker took per pass over our queue since
 * the last call (alg NULL: only take the baseline). A multi-buffer engine
 * fills its lanes only from what one pass hands it. */
enum { BENCH_HIST = 8 };
struct bench_passes {
	uint64_t hist[BENCH_HIST], ops;
};
void bench_report_passes(const struct bench_cfg *cfg, struct cc_conn *conn,
			 const char *alg, struct bench_passes *prev);
/* Informational lines: stdout in table mode, stderr with --csv. */
void bench_note(const struct bench_cfg *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Seconds of the monotonic clock (cryptod/clock.h: a vDSO call). */
static inline double bench_now(void)
{
	return (double)crd_now_ns() * 1e-9;
}

/*
 * --touch: what an application does around each op. Before: rewrite the
 * payload in place (every line becomes dirty in this core's cache, as if
 * just produced, and the bytes stay valid ciphertext for decrypt). After:
 * read the result and the tag. The in-process paths do the same, so the
 * difference is what moving those lines between cores costs.
 */
static inline void bench_touch_write(uint8_t *p, uint32_t len)
{
	volatile uint64_t *w = (volatile uint64_t *)(void *)p;
	uint32_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = w[i];
	for (i = len & ~7u; i < len; i++)
		((volatile uint8_t *)p)[i] = p[i];
}

static inline uint64_t bench_touch_read(const uint8_t *p, uint32_t len)
{
	uint64_t acc = 0, v;
	uint32_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		__builtin_memcpy(&v, p + i, 8);
		acc ^= v;
	}
	for (; i < len; i++)
		acc ^= p[i];
	return acc;
}

/* Where touch reads go, so that the compiler keeps them (one per thread:
 * cryptoctl bench runs a client thread per queue). */
extern _Thread_local volatile uint64_t bench_touch_sink;

/* Constant-time tag comparison, as the daemon does: 1 when they differ. */
static inline unsigned bench_tag_differs(const uint8_t *a, const uint8_t *b,
					 unsigned len)
{
	unsigned i, d = 0;

	for (i = 0; i < len; i++)
		d |= a[i] ^ b[i];
	return d != 0;
}

/* bench_run.c: one algorithm at a time, one size at a time. */
struct bench {
	struct bench_cfg cfg;
	struct bench_daemon d;
	uint8_t *priv_src, *priv_dst; /* in-process paths' blocks; owned */
	uint8_t *ver_src, *ver_dst;   /* the cross-check's blocks; owned */
	uint8_t (*iv)[BENCH_IV_MAX];  /* nslots IVs shared by all; owned */
	int32_t *status;	      /* verification statuses; owned */
};

/* One algorithm's run: its engine, references and keys. */
struct bench_alg_run {
	const struct bench_alg *a;
	char engine[BENCH_ENGINE_MAX];
	struct bench_ref ref;  /* the daemon engine's in-process twin */
	struct bench_ref ossl; /* OpenSSL EVP: cross-check, and timed */
	struct bench_ref dpdk; /* DPDK's PMD in-process, when there */
	bool time_dpdk;
	bool time_ref;		    /* the twin is timed */
	bool cross, time_ossl;	    /* ossl created; ossl is timed */
	uint8_t key[BENCH_KEY_MAX]; /* wiped when done */
	uint8_t auth_key[BENCH_AUTH_KEY_MAX];
};

int bench_alloc_private(struct bench *b);
void bench_free_private(struct bench *b);
/* Engines, references and the session. -ENOTSUP: skip (reason printed). */
int bench_alg_begin(struct bench *b, struct bench_alg_run *r,
		    const struct bench_alg *a);
void bench_alg_end(struct bench *b, struct bench_alg_run *r);
/* Bind the daemon's arena and the private blocks to this size, seal them
 * for decrypt, and verify one burst. 0, -EBADMSG or -errno. */
int bench_prepare(struct bench *b, struct bench_alg_run *r, uint32_t len,
		  struct bench_layout *la, struct bench_layout *lb);
/* After bench_prepare: peer (another in-process path) on the same bytes
 * as the twin's verification burst in lb must give the same output. 0,
 * or -EBADMSG / -errno (message printed). */
int bench_verify_peer(struct bench *b, struct bench_alg_run *r,
		      struct bench_ref *peer, const struct bench_layout *lb);
/* Pin the calling thread (and the threads it creates) to cpu. */
void bench_pin_cpu(int cpu);
double bench_mops(const struct bench_sample *s);
double bench_gbps(const struct bench_sample *s);

#define BENCH_CLIENT_NAME "cryptod-bench"

#endif /* CRYPTOD_BENCH_H */
