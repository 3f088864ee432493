/* SPDX-License-Identifier: MIT */
/*
 * Fair shares by bytes, per user: deficit round robin over uids.
 *
 * Every queue belongs to its owner's user slot (all queues of one uid share
 * it). A worker's pass gives every user one turn; a turn runs that user's
 * queues, from where its last turn stopped, while its credit lasts. Each
 * turn adds FAIR_QUANTUM to the credit (capped at FAIR_QUANTUM, so an
 * idle user banks nothing), every op claimed or stream piece run takes its
 * cost off it (fair_op_cost: its bytes plus FAIR_OP_COST, and a key
 * pair's op the bytes of symmetric work it takes as long as), and a turn
 * always runs at least one op. A user whose op was larger than its credit
 * is in debt and sits out turns until the quanta have paid it back, so
 * over time every user with work gets the same bytes, however many queues
 * it holds and however large its ops; and no turn runs more than one op
 * beyond FAIR_QUANTUM, so another user's op waits at most for what each
 * worker is running plus one turn per user.
 *
 * Credits are shared by the workers without a lock: two workers may serve
 * one user at once (each takes a quantum), and a cap may race with a
 * charge; both only bend the shares a little, never the ordering or any
 * op's result.
 */
#ifndef CRYPTOD_FAIR_H
#define CRYPTOD_FAIR_H

#include <cryptod/compiler.h>

#include <stdint.h>
#include <sys/types.h>

#include <cryptod/ring_abi.h>

#include "bounds.h"

/* What an op costs a turn, in bytes: its data and AAD (a bit-length op's
 * length counts as bytes: an overestimate), the fixed work of any op, and
 * what its engine's row says one op of its kind costs beyond its bytes
 * (alg_cap.cost: a key pair's signature is a fixed amount of work, the
 * time of hundreds of KiB of AES; the caller looks it up, 0 for the
 * symmetric rows). A stream piece costs the same when it is claimed, as
 * it mostly runs there; one that the claiming worker leaves to the poster
 * gets its data back (fair_piece_cost), and the poster charges that when
 * it runs it. (Charging pieces only the fixed part at the claim let one
 * worker claim and run every piece in sight, its sibling idle.) */
static inline int64_t fair_op_cost(const struct crd_sqe *e, uint32_t op_cost)
{
	return (int64_t)e->len + e->aad_len + FAIR_OP_COST + op_cost;
}

static inline int64_t fair_piece_cost(const struct crd_sqe *e)
{
	return (int64_t)e->len + e->aad_len;
}

/* Did an op with this completion status run its data (and so cost its
 * bytes)? One refused before running (a bad descriptor, range, session,
 * policy) did not: its claim is refunded to FAIR_OP_COST, so a garbage
 * length costs its sender no more than any other refusal. */
static inline int fair_op_ran(int status)
{
	return status == CRD_ST_OK || status == CRD_ST_AUTH_FAILED ||
	       status == CRD_ST_BAD_SIGNATURE;
}

/* Control thread: the slot of uid, shared by its queues, with one more
 * reference (a new uid's slot starts with a full quantum). -ENOSPC when
 * MAX_USERS uids hold queues already. */
CRD_MUST_CHECK int fair_user_get(uid_t uid);
/* Control thread: drop a reference, once no worker can see the queue
 * that held it. */
void fair_user_put(unsigned slot);

/* Workers: begin a turn of user slot. Returns the bytes it may run (> 0),
 * or <= 0 while the user is in debt (skip it). */
int64_t fair_turn_begin(unsigned slot);
/* A pass in which every user with work was in debt ran nothing: rather
 * than spin through empty passes, give slot the quanta of the rounds it
 * takes until the least indebted of them (credit best, <= 0) has paid
 * (capped as any turn: a user not in debt gains nothing). */
void fair_skip_rounds(unsigned slot, int64_t best);
/* Which of the user's n queues the turn starts with. */
unsigned fair_turn_first(unsigned slot, unsigned n);
/* End a turn that ran used bytes; the next starts at queue next. */
void fair_turn_end(unsigned slot, unsigned next, int64_t used);

#endif
