/* SPDX-License-Identifier: MIT */
/*
 * The worker pool's modes of cryptoctl bench (scale, pcrypt, latency, and
 * pool for all three; cryptod-poolbench is a link that runs pool): what
 * the worker pool buys, measured through libcryptoclient against daemons
 * the bench starts itself.
 *
 *  scale    16 KiB AES-128-GCM from one client queue, --workers 1..N, the
 *           order of every completion checked, the daemon's run-size
 *           histogram; the null engine gives the ceiling of one queue
 *           (client thread + in-order poster) for the many-core model.
 *  pcrypt   the pcrypt experiment redone: 1420-byte packets, ESP-style
 *           AES-192-CBC + HMAC-SHA1 and AES-192-CBC with a null digest,
 *           serial (1 worker) vs parallel, one and two directions.
 *  latency  one 64-byte GCM op at a time: p50/p99/p99.9 per poll mode,
 *           client polling or sleeping in cc_wait(), warm and cold.
 *
 * Every comparison alternates its configurations round by round (A B C
 * A B C ...) and reports medians: single runs on a shared 2-core machine
 * swing by 30% or more.
 *
 * Files: cli/bench_pool.c (the options, the run's framing), pb_daemon.c
 * (private daemons, each started by bench_spawn), pb_flow.c (one client queue kept full, order and
 * status checked), pb_ref.c (OpenSSL reference for the output check),
 * pb_stats.c (medians, percentiles, run histograms, notes, the machine's
 * load through bench_env),
 * pb_scale.c, pb_esp.c, pb_latency.c (the three sections).
 */
#ifndef CRYPTOD_POOLBENCH_H
#define CRYPTOD_POOLBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench.h"
#include "bench_sheet.h"
#include "cryptoclient.h"

/* Every bound of the bench in one place. */
enum pb_limits {
	PB_MAX_DAEMONS = 24,	   /* scale 1..16, parallel, busy */
	PB_MAX_SCALE_WORKERS = 16, /* --max-workers */
	PB_MAX_ROUNDS = 51,
	PB_MAX_TIME_MS = 10000,
	PB_MAX_SAMPLES = 1000000, /* latency samples per configuration */
	PB_MAX_FLOWS = 2,	  /* queues measured at once */
	PB_MAX_SLOTS = 1024,	  /* ops kept in flight on one queue */
	PB_RING_MIN = 8,	  /* the daemon's smallest ring */
	PB_BURST = 32,		  /* ops per cc_enqueue_burst */
	PB_DEQ_MAX = 64,	  /* completions per cc_dequeue_burst */
	PB_KEY_MAX = 32,
	PB_AUTH_KEY_MAX = 20,
	PB_TAG_MAX = 16,
	PB_IV_MAX = 16,
	PB_AAD_MAX = 64,   /* the slot header that holds it */
	PB_NAME_MAX = 64,  /* client names: how a flow finds its stats */
	PB_PATH_MAX = 108, /* sun_path */
	PB_HIST = 8,	   /* cc_queue_stats.batch_hist */
	/* A polling client yields after this many empty polls: on two cores
	 * the workers need the CPU it would spin on. */
	PB_SPIN_YIELD = 256,
	PB_DRAIN_MS = 10000, /* in-flight ops after a measurement */
};

enum pb_section {
	PB_SEC_SCALE = 1,
	PB_SEC_PCRYPT = 2,
	PB_SEC_LATENCY = 4,
	PB_SEC_ALL = 7,
};

struct pb_cfg {
	const char *daemon; /* cryptod binary */
	unsigned sections;  /* enum pb_section bits */
	bool quick, csv, verbose;
	unsigned rounds;
	unsigned time_ms;     /* per configuration per round */
	unsigned warm_ms;     /* before each timed window, not counted */
	unsigned max_workers; /* scale: 1..max_workers */
	unsigned slots;	      /* throughput: ops kept in flight per queue */
	unsigned lat_samples; /* latency: warm samples per configuration */
	unsigned lat_cold;    /* latency: cold samples per configuration */
	unsigned pause_us;    /* cold: idle time before each op */
	unsigned spin_us;     /* the daemons' --spin-us */
	bool pin; /* daemons --pin (worker i on CPU i), client on the last */
	unsigned ncpu;
	bool json;		/* the sink prints JSON (notes: stderr) */
	struct bench_sink sink; /* where the sections' sheets go */
};

/* ---- pb_daemon.c: private daemons on sockets in one temp dir ---- */

struct pb_daemon {
	struct bench_spawn sp; /* sp.pid 0: not running */
	unsigned workers;
	bool busy;   /* --poll-mode busy */
	bool paused; /* SIGSTOPped */
};

struct pb_daemons {
	const char *bin;
	unsigned spin_us;
	bool pin;
	char dir[64];
	struct pb_daemon d[PB_MAX_DAEMONS];
	unsigned n;
	unsigned failures; /* daemons that died or exited non-zero */
};

int pb_daemons_init(struct pb_daemons *ds, const char *bin, unsigned spin_us,
		    bool pin);
/* The daemon with these settings, started on first use. 0 or -errno. */
int pb_daemon_get(struct pb_daemons *ds, unsigned workers, bool busy,
		  struct pb_daemon **out);
/* A busy-poll daemon spins even when idle: stop it (SIGSTOP) while other
 * configurations are measured. Both return once the state is reached. */
int pb_daemon_pause(struct pb_daemon *d);
int pb_daemon_resume(struct pb_daemon *d);
/* SIGTERM; 0 when it exited with status 0, else -1 (log shown). */
int pb_daemon_stop(struct pb_daemons *ds, struct pb_daemon *d);
/* Stop every daemon still running, remove the dir. Returns the number of
 * daemons that failed (now or earlier). */
unsigned pb_daemons_fini(struct pb_daemons *ds);
/* "w0@1 w1@0": the CPU each worker thread last ran on. */
void pb_daemon_worker_cpus(const struct pb_daemon *d, char *buf, size_t len);
/* The daemons' pids, for CPU accounting; returns the count. */
unsigned pb_daemons_pids(const struct pb_daemons *ds, int *out, unsigned max);

/* ---- pb_ref.c: the algorithms and an OpenSSL reference ---- */

struct pb_alg {
	const char *name; /* as printed */
	enum cc_alg alg;
	uint8_t key_len, auth_key_len, tag_len, iv_len, aad_len;
	const char *engine; /* NULL: the daemon's choice */
};

extern const struct pb_alg pb_gcm128;	/* AES-128-GCM, tag 16 */
extern const struct pb_alg pb_null;	/* the null engine: copy, or nothing */
extern const struct pb_alg pb_esp_sha1; /* AES-192-CBC + HMAC-SHA1-96 */
extern const struct pb_alg pb_esp_null; /* AES-192-CBC, null digest */

/* Encrypt len bytes of in into out (may alias) and compute the tag as the
 * daemon must. 0, or -1 when OpenSSL fails. */
int pb_ref_encrypt(const struct pb_alg *a, const uint8_t *key,
		   const uint8_t *auth_key, const uint8_t *iv,
		   const uint8_t *aad, const uint8_t *in, uint8_t *out,
		   uint32_t len, uint8_t *tag);

/* ---- pb_flow.c: one client queue kept full ---- */

struct pb_flow_params {
	const struct pb_alg *alg;
	enum cc_dir dir; /* decrypt: each op replays a verified ciphertext */
	uint32_t len;
	unsigned slots; /* ops in flight; each has its own arena slot */
	unsigned burst;
	bool wait;		/* sleep in cc_wait() instead of polling */
	char name[PB_NAME_MAX]; /* unique: the stats are found by it */
};

struct pb_flow {
	struct pb_flow_params p;
	struct cc_conn *conn; /* owned */
	struct cc_queue *q;   /* owned (through conn) */
	uint32_t session;
	size_t hdr, stride; /* slot: [hdr: .. aad][payload][tag], 64-aligned */
	uint8_t *slots;	    /* arena: p.slots * stride */
	uint8_t *plain;	    /* each slot's plaintext; owned */
	uint8_t *pristine;  /* decrypt: each slot's ciphertext; owned */
	uint8_t (*iv)[PB_IV_MAX]; /* per slot; owned */
	struct cc_op *ops;	  /* one burst; owned */
	uint8_t key[PB_KEY_MAX], auth_key[PB_AUTH_KEY_MAX];

	uint64_t next_sub, next_done; /* sequence numbers = user_data */
	uint64_t dec_from;	      /* first op after the verification pass */
	/* Errors since open: completions out of order, with a bad status
	 * or length, and queues that stopped completing. */
	uint64_t order_errors, status_errors, stalls;
	int first_status;

	/* The last measurement. */
	uint64_t win_ops, retries, empty_polls;
	double win_s;
	/* Where the threads ran halfway through (pb_flow_measure's probe). */
	int cpu;
	char worker_cpus[128];
};

int pb_flow_open(struct pb_flow *f, const char *sock,
		 const struct pb_flow_params *p);
void pb_flow_close(struct pb_flow *f);
/* One pass over every slot through the daemon, compared with OpenSSL
 * (the null algorithm: with the input). A decrypt flow keeps the
 * ciphertexts to replay. 0 or -1 (printed). */
int pb_flow_verify(struct pb_flow *f);
/* Keep flows[0..n) full at once (flows 1.. on their own threads) for
 * warm_ms, then time_ms timed; drain. With probe, flow 0 notes halfway
 * where probe's workers run (in worker_cpus). 0, or -1 if a flow saw a
 * wrong order or status or stopped completing (printed). */
int pb_flow_measure(struct pb_flow *const *flows, unsigned n, unsigned warm_ms,
		    unsigned time_ms, const struct pb_daemon *probe);
static inline double pb_flow_ops_per_s(const struct pb_flow *f)
{
	return f->win_s > 0 ? (double)f->win_ops / f->win_s : 0.0;
}
/* Fill op for sequence number seq (its slot is seq % slots). */
void pb_flow_op(struct pb_flow *f, uint64_t seq, struct cc_op *op);
/* Check one completion against the next expected; counts errors. */
void pb_flow_check(struct pb_flow *f, const struct cc_completion *c);
/* Errors recorded so far, as one number. */
static inline uint64_t pb_flow_errors(const struct pb_flow *f)
{
	return f->order_errors + f->status_errors + f->stalls;
}
/* The daemon's counters for this flow's queue. 0 or -errno. */
int pb_flow_stats(struct pb_flow *f, struct cc_queue_stats *out);

/* ---- pb_stats.c ---- */

uint64_t pb_now_ns(void);
void pb_sleep_us(unsigned us);
/* Notes go to stdout, or stderr with --csv or --json (stdout is data). */
void pb_note(const struct pb_cfg *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "1 | 2-3 | 4-7 ...": run-size buckets of cc_queue_stats.batch_hist. */
const char *pb_hist_label(unsigned k);
/* The difference of two snapshots of one queue's counters. */
void pb_qstats_sub(struct cc_queue_stats *d, const struct cc_queue_stats *a,
		   const struct cc_queue_stats *b);

/* bench_env over the daemons that are up: start (printing the machine),
 * a silent mark, and the share of others since ("during the run"). */
void pb_env_start(struct bench_env *e, const struct pb_cfg *cfg,
		  const struct pb_daemons *ds);
void pb_env_mark(struct bench_env *e, const struct pb_daemons *ds);
void pb_env_end(const struct bench_env *e, const struct pb_cfg *cfg,
		const struct pb_daemons *ds, const char *during);
FILE *pb_note_out(const struct pb_cfg *cfg);

/* ---- the sections: 0, or -1 when something was wrong; their tables go
 * to cfg->sink as sheets ---- */

int pb_scale_run(const struct pb_cfg *cfg, struct pb_daemons *ds);
int pb_esp_run(const struct pb_cfg *cfg, struct pb_daemons *ds);
int pb_latency_run(const struct pb_cfg *cfg, struct pb_daemons *ds);

#endif
