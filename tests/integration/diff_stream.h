/* SPDX-License-Identifier: MIT */
/*
 * What the test_diff_stream* programs share (diff_stream.c): a client
 * process (its connection, its queues, its counts), its failures, and the
 * random message lengths. STREAM_SEED replays a run;
 * STREAM_ALLOW_MISSING=1 skips (and names) an algorithm whose FIRST piece
 * fails with -EOPNOTSUPP.
 */
#ifndef CRYPTOD_TEST_DIFF_STREAM_H
#define CRYPTOD_TEST_DIFF_STREAM_H

#include "stream_common.h"

#define STREAM_CLIENTS 3
#define QUEUES 2
#define SQ_ENTRIES 64
#define ARENA (64u << 20)
#define ROUND_MSGS 5 /* two streams each */
#define ROUND_STREAMS (2 * ROUND_MSGS)
#define PIECES_MAX 4096
#define TIMEOUT_MS 60000
#define SHOW_MAX 10

extern int sanitized;
extern int allow_missing;
extern uint64_t seed;

struct client {
	unsigned id;
	struct cc_conn *conn;
	struct cc_queue *q[QUEUES];
	unsigned long checked, failed, streams, pieces, missing_n;
	unsigned shown;
	int missing[64]; /* by sc_vars index */
	/* by sc_vars index: sc_engine does not stream it (its capability
	 * says so): not run */
	int skip[64];
	unsigned len_said[64];
	unsigned long len_bad; /* pieces OK with a wrong length */
	int fatal;
};

void fail(struct client *c, const char *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
unsigned var_index(const struct sc_var *v);
void show_stream(struct client *c, const struct sc_stream *s);
void note_missing(struct client *c, const struct sc_var *v);
uint32_t rnd_msg_len(void);

/* Read the settings (sanitized, allow_missing, seed, sc_engine) and say
 * them, with extra at the end of the line. */
void ds_begin(const char *extra);
/* Connect client id (named test_diff_stream) and open its queues, its
 * random stream seeded from seed and id: 0, or -1 (reported). */
int ds_client_open(const struct fx_daemon *d, unsigned id, struct client *c);
/* Close c's queues and connection, print its checks: the exit status. */
int ds_client_close(struct client *c, uint64_t t0);
/* Start the daemon (two workers), run each of n children (fork), wait for
 * them and stop the daemon: the exit status. */
int ds_run(unsigned n, int (*child)(const struct fx_daemon *d, unsigned k));

#endif
