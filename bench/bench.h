/* SPDX-License-Identifier: MIT */
/*
 * cryptod-bench: the daemon path (libcryptoclient, zero-copy, across a
 * process boundary) measured side by side with intel-ipsec-mb's direct API
 * in this process, alternating A B A B ... so that the noise of a shared
 * machine hits both alike.
 *
 * Files: cryptod_bench.c (main, the per-size loop), bench_opts.c (command
 * line), bench_layout.c (where each op's bytes live), bench_daemon.c (path
 * A), bench_inproc.c (path B and the reference results), bench_spawn.c
 * (--spawn-daemon), bench_report.c (medians, table, CSV, daemon stats).
 */
#ifndef CRYPTOD_BENCH_H
#define CRYPTOD_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cryptoclient.h"

/* All bounds of the bench's options live here. */
enum bench_limits {
	BENCH_MAX_SIZES = 64,
	BENCH_MAX_BURST = 1024,
	BENCH_MAX_DEPTH = 64,
	BENCH_MAX_ROUNDS = 101,
	BENCH_MAX_TIME_MS = 60000,
	BENCH_MAX_AAD = 1024,
	BENCH_MAX_WORKERS = 256,
	BENCH_TAG_LEN = 16,
	BENCH_IV_LEN = 12,
	BENCH_SLOT_ALIGN = 64,
	BENCH_PATH_MAX = 108, /* sun_path */
};

enum bench_alg {
	BENCH_ALG_AES128_GCM,
	BENCH_ALG_AES256_GCM,
	BENCH_ALG_NULL,
};

struct bench_cfg {
	char socket[BENCH_PATH_MAX];
	const char *spawn;  /* cryptod binary to start, or NULL */
	unsigned workers;   /* --workers for the spawned daemon */
	const char *engine; /* daemon engine name, NULL = its choice */
	enum bench_alg alg;
	enum cc_dir dir;
	uint32_t sizes[BENCH_MAX_SIZES];
	unsigned n_sizes;
	unsigned burst; /* ops per enqueue and per in-process burst */
	unsigned depth; /* bursts kept in flight on the daemon path */
	unsigned
		ring; /* SQ entries; 0 = smallest power of two >= burst*depth */
	unsigned rounds;  /* A B pairs per size */
	unsigned time_ms; /* per measurement */
	unsigned aad_len;
	int cpu;     /* pin the client thread here; -1 = no pinning */
	bool oop;    /* out of place (decrypt is always out of place) */
	bool touch;  /* the client writes each payload before submitting it
		      * and reads each result, as an application would */
	bool inproc; /* run path B */
	bool csv;
	bool smoke;
	bool verbose; /* print every round */
};

/* bench_opts.c: returns 0, 1 for --help (usage printed), or -EINVAL
 * (message printed). */
int bench_opts_parse(struct bench_cfg *cfg, int argc, char **argv);
const char *bench_alg_name(enum bench_alg alg);
unsigned bench_key_len(enum bench_alg alg);
unsigned bench_tag_len(enum bench_alg alg);

/*
 * Where the bytes of op slot i live, for one buffer size. Each slot is
 * [aad | payload | tag] packed, the slot start 64-byte aligned, like an
 * ESP packet with its ICV; out-of-place destinations are a second packed
 * block. Both paths use the same geometry: path A inside the queue's
 * arena, path B in private memory.
 */
struct bench_layout {
	uint32_t len, aad_len, tag_len;
	size_t stride, dst_stride; /* bytes between slots */
	unsigned nslots;
	bool oop;
	uint8_t *src; /* nslots * stride; owned by whoever made the block */
	uint8_t *dst; /* nslots * dst_stride when oop, else == src */
	uint8_t (*iv)[BENCH_IV_LEN]; /* nslots IVs, private memory */
};

/* bench_layout.c */
size_t bench_layout_stride(uint32_t len, uint32_t aad_len, uint32_t tag_len);
size_t bench_layout_dst_stride(uint32_t len);
void bench_layout_set(struct bench_layout *l, uint32_t len,
		      const struct bench_cfg *cfg, unsigned nslots);
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
	return l->oop ? l->dst + (size_t)i * l->dst_stride
		      : bench_slot_src(l, i);
}
/* Fill AAD, payload and IVs with a deterministic pattern for this size. */
void bench_layout_fill(const struct bench_layout *l);

/* One measurement. */
struct bench_sample {
	uint64_t ops, bytes;
	uint64_t retries, empty_polls; /* daemon path only */
	double secs;
};

/* bench_inproc.c: intel-ipsec-mb direct API, one manager. */
struct bench_imb;
int bench_imb_create(enum bench_alg alg, const uint8_t *key,
		     struct bench_imb **out);
void bench_imb_destroy(struct bench_imb *m);
const char *bench_imb_arch(const struct bench_imb *m);
/* One op, reference semantics: encrypt writes the tag; decrypt computes it
 * into tag_out (caller compares). NULL copies (or does nothing in place). */
void bench_imb_crypt(struct bench_imb *m, enum cc_dir dir, uint8_t *dst,
		     const uint8_t *src, uint32_t len, const uint8_t *iv,
		     const uint8_t *aad, uint32_t aad_len, uint8_t *tag_out);
/* Encrypt every slot's payload into itself/dst so that decrypt has valid
 * ciphertext and tags to chew on: leaves ciphertext in src and the tag in
 * the slot's tag field. */
void bench_imb_seal_slots(struct bench_imb *m, const struct bench_layout *l);
/* Path B: run bursts over the slots for time_ms. Returns 0 or -EBADMSG
 * when a decrypt tag did not verify (the layout is broken). */
int bench_imb_run(struct bench_imb *m, const struct bench_layout *l,
		  enum cc_dir dir, unsigned burst, bool touch, unsigned time_ms,
		  struct bench_sample *out);

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
	struct bench_layout l; /* the bound size's geometry */
};
int bench_daemon_open(struct bench_daemon *d, const struct bench_cfg *cfg,
		      const uint8_t *key);
void bench_daemon_close(struct bench_daemon *d);
/* Point the layout's blocks into the arena for this size and build ops. */
void bench_daemon_bind(struct bench_daemon *d, struct bench_layout *l,
		       enum cc_dir dir);
/* Submit slots [0, n) once and wait for them (verification). Returns 0, or
 * -errno / the first bad completion status (message printed). */
int bench_daemon_run_once(struct bench_daemon *d, unsigned n,
			  int32_t *status_out);
int bench_daemon_run(struct bench_daemon *d, const struct bench_cfg *cfg,
		     unsigned time_ms, struct bench_sample *out);

/* bench_spawn.c */
struct bench_spawn {
	int pid;
	char dir[64];
	char log[96];
};
/* avoid_cpu >= 0: the daemon runs on every online CPU but that one. */
int bench_spawn_start(struct bench_spawn *s, const char *bin, unsigned workers,
		      int avoid_cpu, char *sock, size_t sock_len);
/* SIGTERM, wait; returns the daemon's exit status (0 expected) or -errno. */
int bench_spawn_stop(struct bench_spawn *s);

/* bench_env.c: how busy the machine was before and during the run. */
struct bench_env {
	bool ok;
	int daemon_pid;				 /* > 0 when known */
	unsigned long long idle0, total0, ours0; /* clock ticks */
};
void bench_env_start(struct bench_env *e, const struct bench_cfg *cfg,
		     int daemon_pid);
void bench_env_end(const struct bench_env *e, const struct bench_cfg *cfg);

/* bench_report.c */
struct bench_row {
	uint32_t size;
	double ops_m, gbps, in_ops_m, in_gbps, ratio;
	uint64_t retries, empty_polls;
	bool have_inproc;
};
double bench_median(double *v, unsigned n); /* sorts v */
void bench_report_header(const struct bench_cfg *cfg);
void bench_report_row(const struct bench_cfg *cfg, const struct bench_row *r);
void bench_report_summary(const struct bench_cfg *cfg,
			  const struct bench_row *rows, unsigned n);
void bench_report_daemon_stats(const struct bench_cfg *cfg,
			       struct cc_conn *conn, const char *client_name);
/* Informational lines: stdout in table mode, stderr with --csv. */
void bench_note(const struct bench_cfg *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline double bench_now(void)
{
	struct timespec ts;

	/* vDSO: no syscall with the tsc clocksource. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * --touch: what an application does around each op. Before: rewrite the
 * payload in place (every line becomes dirty in this core's cache, as if
 * just produced, and the bytes stay valid ciphertext for decrypt). After:
 * read the result and the tag. Path B does the same, so the difference is
 * what moving those lines between cores costs.
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

/* Where touch reads go, so that the compiler keeps them. */
extern volatile uint64_t bench_touch_sink;

#define BENCH_CLIENT_NAME "cryptod-bench"

#endif /* CRYPTOD_BENCH_H */
