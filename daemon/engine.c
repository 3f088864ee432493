/* SPDX-License-Identifier: MIT */
#include "engine.h"
#include "log.h"

#include <errno.h>
#include <string.h>

/* Fastest first: engine_select() takes the first available that fits. */
static const struct engine *const engines[] = {
	&engine_aesni,
	&engine_null,
};
_Static_assert(sizeof(engines) / sizeof(engines[0]) <= ENGINE_MAX,
	       "ENGINE_MAX");

static struct {
	int err; /* 0 = available, else -errno from probe */
	char why[128];
} probe_state[ENGINE_MAX];

unsigned engine_count(void)
{
	return sizeof(engines) / sizeof(engines[0]);
}

const struct engine *engine_get(unsigned idx)
{
	return idx < engine_count() ? engines[idx] : NULL;
}

int engine_probe_all(void)
{
	int n = 0;
	for (unsigned i = 0; i < engine_count(); i++) {
		probe_state[i].why[0] = '\0';
		probe_state[i].err = engines[i]->probe(
			probe_state[i].why, sizeof(probe_state[i].why));
		if (probe_state[i].err) {
			log_warn("engine %s unavailable: %s", engines[i]->name,
				 probe_state[i].why);
			continue;
		}
		log_info("engine %s available", engines[i]->name);
		n++;
	}
	return n;
}

void engine_fini_all(void)
{
	for (unsigned i = 0; i < engine_count(); i++)
		if (engines[i]->fini)
			engines[i]->fini();
}

int engine_available(unsigned idx)
{
	return idx < engine_count() && probe_state[idx].err == 0;
}

const char *engine_unavailable_why(unsigned idx)
{
	return idx < engine_count() ? probe_state[idx].why : "no such engine";
}

int engine_select(enum alg alg, const char *name)
{
	int named = name && *name;
	int err = named ? -ENOENT : -EOPNOTSUPP;
	for (unsigned i = 0; i < engine_count(); i++) {
		const struct engine *e = engines[i];
		if (named && strcmp(name, e->name))
			continue;
		if (!e->supports(alg)) {
			err = -EOPNOTSUPP;
			continue;
		}
		if (!engine_available(i)) {
			err = -ENODEV; /* keep looking for another engine */
			continue;
		}
		return i;
	}
	return err;
}

int engine_ct_memcmp(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d != 0;
}
