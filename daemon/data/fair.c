/* SPDX-License-Identifier: MIT */
#include "fair.h"

#include <errno.h>
#include <stdatomic.h>

struct fair_user {
	/* Written by the workers of a turn, read by the next. */
	_Alignas(64) _Atomic int64_t credit;
	_Atomic unsigned next; /* the queue the next turn starts with */
	/* Control thread only. */
	uid_t uid;
	unsigned refs; /* queues that name this slot, until reclaimed */
};

static struct fair_user users[MAX_USERS];

int fair_user_get(uid_t uid)
{
	int free_slot = -1;
	for (unsigned i = 0; i < MAX_USERS; i++) {
		if (users[i].refs && users[i].uid == uid) {
			users[i].refs++;
			return (int)i;
		}
		if (!users[i].refs && free_slot < 0)
			free_slot = (int)i;
	}
	if (free_slot < 0)
		return -ENOSPC;
	struct fair_user *u = &users[free_slot];
	/* A worker may still hold a queue of the slot's last user in a
	 * stale list until its next pass: the stores are atomic, and all it
	 * could do is bend this user's first share. */
	atomic_store_explicit(&u->credit, FAIR_QUANTUM, memory_order_relaxed);
	atomic_store_explicit(&u->next, 0, memory_order_relaxed);
	u->uid = uid;
	u->refs = 1;
	return free_slot;
}

void fair_user_put(unsigned slot)
{
	if (slot < MAX_USERS && users[slot].refs)
		users[slot].refs--;
}

int64_t fair_turn_begin(unsigned slot)
{
	struct fair_user *u = &users[slot];
	int64_t c = atomic_load_explicit(&u->credit, memory_order_relaxed), n;
	do {
		n = c + FAIR_QUANTUM; /* this round's quantum */
		if (n > FAIR_QUANTUM)
			n = FAIR_QUANTUM; /* an idle user banks nothing */
	} while (!atomic_compare_exchange_weak_explicit(
		&u->credit, &c, n, memory_order_relaxed, memory_order_relaxed));
	return n;
}

void fair_skip_rounds(unsigned slot, int64_t best)
{
	struct fair_user *u = &users[slot];
	int64_t add = (-best / FAIR_QUANTUM) * FAIR_QUANTUM;
	int64_t c = atomic_load_explicit(&u->credit, memory_order_relaxed), n;
	do {
		n = c + add;
		if (n > FAIR_QUANTUM)
			n = FAIR_QUANTUM;
	} while (!atomic_compare_exchange_weak_explicit(
		&u->credit, &c, n, memory_order_relaxed, memory_order_relaxed));
}

unsigned fair_turn_first(unsigned slot, unsigned n)
{
	return atomic_load_explicit(&users[slot].next, memory_order_relaxed) %
	       n;
}

void fair_turn_end(unsigned slot, unsigned next, int64_t used)
{
	struct fair_user *u = &users[slot];
	atomic_store_explicit(&u->next, next, memory_order_relaxed);
	atomic_fetch_sub_explicit(&u->credit, used, memory_order_relaxed);
}
