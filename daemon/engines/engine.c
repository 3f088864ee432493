/* SPDX-License-Identifier: MIT */
#include "engine.h"
#include "names.h"
#include "log.h"

#include <errno.h>
#include <string.h>

/* Fastest first: engine_select() takes the first available that fits. */
static const struct engine *const engines[] = {
	&engine_aesni,	&engine_openssl,       &engine_null,
	&engine_kernel, &engine_kernel_pcrypt,
};
_Static_assert(sizeof(engines) / sizeof(engines[0]) <= ENGINE_MAX,
	       "ENGINE_MAX");

static struct {
	int err; /* 0 = available, else -errno from probe */
	char why[256];
} probe_state[ENGINE_MAX];

const char *alg_name(unsigned alg)
{
	return crd_alg_name(alg);
}

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
		probe_state[i].err =
			engines[i]->probe(engines[i], probe_state[i].why,
					  sizeof(probe_state[i].why));
		if (probe_state[i].err) {
			log_warn("engine %s unavailable: %s", engines[i]->name,
				 probe_state[i].why);
			continue;
		}
		/* why: what the probe found (a CPU feature, a device), or
		 * nothing to add (null, openssl). */
		if (probe_state[i].why[0])
			log_info("engine %s available (%s)", engines[i]->name,
				 probe_state[i].why);
		else
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

int engine_alg_available(unsigned idx, unsigned alg, const char **why)
{
	if (idx >= engine_count())
		return 0;
	/* The per-algorithm reason says more than the engine's. */
	const char *r =
		engines[idx]->alg_unavailable
			? engines[idx]->alg_unavailable(engines[idx], alg)
			: NULL;
	if (!r && !engine_available(idx))
		r = engine_unavailable_why(idx);
	if (why)
		*why = r ? r : "";
	return r == NULL;
}

const struct alg_cap *engine_cap(unsigned idx, unsigned alg)
{
	const struct engine *e = engine_get(idx);
	if (!e)
		return NULL;
	for (unsigned i = 0; i < e->n_caps; i++)
		if (e->caps[i].alg == alg)
			return &e->caps[i];
	return NULL;
}

int engine_streams(const struct engine *e, unsigned alg)
{
	if (!e->stream || !crd_alg_streams(alg))
		return 0;
	for (unsigned i = 0; i < e->n_caps; i++)
		if (e->caps[i].alg == alg)
			return e->caps[i].stream;
	return 0;
}

/* Operator routing: alg -> engine index used when a session names none. */
static int route[CRD_ALG_MAX_] = { [0 ... CRD_ALG_MAX_ - 1] = -1 };

int engine_route_set(unsigned alg, const char *name)
{
	if (alg == 0 || alg >= CRD_ALG_MAX_)
		return -EINVAL;
	if (!name || !*name) {
		route[alg] = -1;
		return 0;
	}
	for (unsigned i = 0; i < engine_count(); i++) {
		if (strcmp(name, engines[i]->name))
			continue;
		if (!engine_cap(i, alg))
			return -EOPNOTSUPP;
		route[alg] = i;
		return 0;
	}
	return -ENOENT;
}

const char *engine_route_get(unsigned alg)
{
	return alg < CRD_ALG_MAX_ && route[alg] >= 0 ? engines[route[alg]]->name
						     : NULL;
}

int engine_select(unsigned alg, const char *name)
{
	if ((!name || !*name) && alg < CRD_ALG_MAX_ && route[alg] >= 0 &&
	    engine_alg_available(route[alg], alg, NULL))
		return route[alg];
	int named = name && *name;
	int err = named ? -ENOENT : -EOPNOTSUPP;
	for (unsigned i = 0; i < engine_count(); i++) {
		if (named && strcmp(name, engines[i]->name))
			continue;
		if (!engine_cap(i, alg)) {
			if (err != -ENODEV) /* "exists but unavailable" wins */
				err = -EOPNOTSUPP;
			continue;
		}
		if (!engine_alg_available(i, alg, NULL)) {
			err = -ENODEV; /* keep looking for another engine */
			continue;
		}
		return i;
	}
	return err;
}

int engine_select_sessionless(unsigned alg)
{
	for (unsigned i = 0; i < engine_count(); i++)
		if (!engines[i]->no_sessionless && engine_cap(i, alg) &&
		    engine_alg_available(i, alg, NULL))
			return i;
	return -ENODEV;
}

const char *engine_select_why(unsigned alg, const char *name, const char **eng)
{
	for (unsigned i = 0; i < engine_count(); i++) {
		const char *why;
		if ((name && *name && strcmp(name, engines[i]->name)) ||
		    !engine_cap(i, alg) || engine_alg_available(i, alg, &why))
			continue;
		if (eng)
			*eng = engines[i]->name;
		return why;
	}
	return NULL;
}

int range_has(const struct range *r, unsigned n, uint32_t v)
{
	for (unsigned i = 0; i < n; i++) {
		if (v < r[i].min || v > r[i].max)
			continue;
		if (v == r[i].min ||
		    (r[i].inc && (v - r[i].min) % r[i].inc == 0))
			return 1;
	}
	return 0;
}

int engine_ct_memcmp(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d != 0;
}

void engine_burn_stack(void)
{
	uint8_t pad[ENGINE_BURN_STACK];
	explicit_bzero(pad, sizeof(pad));
	/* pad is used: the zeroing is not dead */
	__asm__ volatile("" : : "r"(pad) : "memory");
}

#if defined(__x86_64__)
__attribute__((target("avx512f"), noinline)) static void clear_zmm_hi(void)
{
	__asm__ volatile("vpxord %%zmm16, %%zmm16, %%zmm16\n\t"
			 "vpxord %%zmm17, %%zmm17, %%zmm17\n\t"
			 "vpxord %%zmm18, %%zmm18, %%zmm18\n\t"
			 "vpxord %%zmm19, %%zmm19, %%zmm19\n\t"
			 "vpxord %%zmm20, %%zmm20, %%zmm20\n\t"
			 "vpxord %%zmm21, %%zmm21, %%zmm21\n\t"
			 "vpxord %%zmm22, %%zmm22, %%zmm22\n\t"
			 "vpxord %%zmm23, %%zmm23, %%zmm23\n\t"
			 "vpxord %%zmm24, %%zmm24, %%zmm24\n\t"
			 "vpxord %%zmm25, %%zmm25, %%zmm25\n\t"
			 "vpxord %%zmm26, %%zmm26, %%zmm26\n\t"
			 "vpxord %%zmm27, %%zmm27, %%zmm27\n\t"
			 "vpxord %%zmm28, %%zmm28, %%zmm28\n\t"
			 "vpxord %%zmm29, %%zmm29, %%zmm29\n\t"
			 "vpxord %%zmm30, %%zmm30, %%zmm30\n\t"
			 "vpxord %%zmm31, %%zmm31, %%zmm31" ::
				 : "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",
				   "xmm21", "xmm22", "xmm23", "xmm24", "xmm25",
				   "xmm26", "xmm27", "xmm28", "xmm29", "xmm30",
				   "xmm31");
}

__attribute__((target("avx"), noinline)) static void clear_ymm(void)
{
	__asm__ volatile("vzeroall" ::
				 : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
				   "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
				   "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
				   "xmm15");
}
#endif

void engine_clear_vector_regs(void)
{
#if defined(__x86_64__)
	/* A load and a test each: libgcc fills its CPU model before main. */
	if (__builtin_cpu_supports("avx512f"))
		clear_zmm_hi();
	if (__builtin_cpu_supports("avx"))
		clear_ymm();
#endif
}

void engine_burn_stack_n(size_t n)
{
	uint8_t pad[ENGINE_BURN_STACK];
	if (n > sizeof(pad))
		n = sizeof(pad);
	/* The stack grows down: the bytes just below the caller's frame are
	 * pad's last ones. */
	explicit_bzero(pad + sizeof(pad) - n, n);
	__asm__ volatile("" : : "r"(pad) : "memory");
}
