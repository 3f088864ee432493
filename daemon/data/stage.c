/* SPDX-License-Identifier: MIT */
#include "stage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "session.h"

/* Largest staged op: AAD in front of the data (authenc). */
#define STAGE_BOUNCE_SIZE                                                      \
	crd_align_up((uint64_t)CRD_OP_MAX_LEN + CRD_AAD_MAX, 4096)

int stage_init(struct stage *st)
{
	int err;
	memset(st, 0, sizeof(*st));
	/* Offsets, lengths and IVs (public), no secrets: plain heap (~1.2 KiB
	 * each). */
	st->sg = calloc(WORKER_BURST, sizeof(*st->sg));
	if (!st->sg)
		return -ENOMEM;
	size_t size = WORKER_BURST * sizeof(struct session);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto err_sg;
	}
	/* Session-less keys are keys too: locked, out of core dumps. */
	madvise(p, size, MADV_DONTDUMP);
	if (mlock(p, size) < 0)
		log_warn("worker scratch: mlock failed (%s)", strerror(errno));
	st->sl = p;
	return 0;

err_sg:
	free(st->sg);
	st->sg = NULL;
	return err;
}

void stage_fini(struct stage *st)
{
	free(st->sg);
	st->sg = NULL;
	if (st->sl) {
		explicit_bzero(st->sl, WORKER_BURST * sizeof(struct session));
		munmap(st->sl, WORKER_BURST * sizeof(struct session));
	}
	if (st->bounce)
		munmap(st->bounce, st->bounce_size);
	memset(st, 0, sizeof(*st));
}

int stage_sessionless(struct stage *st, const uint8_t *arena,
		      uint64_t arena_size, const struct crd_sqe *e,
		      void *const *eng_ctx, const struct session **out)
{
	struct crd_sessionless p;
	if (!session_sessionless_allowed()) /* key policy: keys.sessionless */
		return CRD_ST_POLICY;
	if (!desc_range_ok(e->sl_off, sizeof(p), arena_size))
		return CRD_ST_BAD_RANGE;
	if (st->sl_used >= WORKER_BURST)
		return CRD_ST_ENGINE; /* cannot happen: one per descriptor */
	memcpy(&p, arena + e->sl_off, sizeof(p)); /* read once */

	int st_ = CRD_ST_OK;
	/* A key pair is parsed into OpenSSL's heap, which a scratch slot's
	 * wipe would not free: sessions only (ring_abi.h). */
	if (p.reserved || p.key_len > CRD_KEY_MAX ||
	    p.auth_key_len > CRD_AUTH_KEY_MAX || crd_alg_pkey(p.alg))
		st_ = CRD_ST_BAD_DESC;
	struct session *s = &st->sl[st->sl_used];
	if (st_ == CRD_ST_OK) {
		struct session_params sp = {
			.alg = p.alg,
			.key = p.key,
			.key_len = p.key_len,
			.auth_key = p.auth_key,
			.auth_key_len = p.auth_key_len,
			.tag_len = p.tag_len,
		};
		st->sl_used++; /* wiped at the end of the pass, used or not */
		int err = p.alg == 0 || p.alg >= CRD_ALG_MAX_
				  ? -EINVAL
				  : session_setup(s, &sp, eng_ctx);
		if (err)
			st_ = err == -EPERM ? CRD_ST_POLICY : CRD_ST_BAD_PARAM;
	}
	explicit_bzero(&p, sizeof(p));
	*out = st_ == CRD_ST_OK ? s : NULL;
	return st_;
}

void stage_pass_end(struct stage *st)
{
	if (st->sl_used)
		explicit_bzero(st->sl, st->sl_used * sizeof(struct session));
	st->sl_used = 0;
}

static int stage_bounce(struct stage *st)
{
	if (st->bounce)
		return 0;
	void *p = mmap(NULL, STAGE_BOUNCE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	madvise(p, STAGE_BOUNCE_SIZE, MADV_DONTDUMP); /* client plaintext */
	st->bounce = p;
	st->bounce_size = STAGE_BOUNCE_SIZE;
	return 0;
}

void stage_run(struct stage *st, uint8_t *arena, struct engine_op *op,
	       const struct desc_sgl *sg, void *eng_ctx)
{
	if (stage_bounce(st)) {
		op->status = CRD_ST_ENGINE;
		return;
	}
	int authenc = desc_is_authenc(op->sess->alg);
	size_t pre = authenc ? op->aad_len : 0;
	uint8_t *b = st->bounce;

	/* authenc MACs aad || data in one pass: stage them contiguously. */
	if (pre)
		memcpy(b, op->aad, pre);
	size_t pos = pre;
	for (unsigned i = 0; i < sg->nsrc; i++) {
		memcpy(b + pos, arena + sg->src[i].off, sg->src[i].len);
		pos += sg->src[i].len;
	}
	if (authenc)
		op->aad = b;
	op->src = b + pre;
	op->dst = b + pre; /* in place in the bounce buffer */

	op->sess->eng->process(eng_ctx, op, 1);

	/* A failed tag check zeroed the bounce copy: scatter the zeros, so
	 * the destination holds no stale data either. */
	if (op->status == CRD_ST_OK || op->status == CRD_ST_AUTH_FAILED) {
		pos = pre;
		for (unsigned i = 0; i < sg->ndst; i++) {
			memcpy(arena + sg->dst[i].off, b + pos, sg->dst[i].len);
			pos += sg->dst[i].len;
		}
	}
	explicit_bzero(b, pre + op->len);
}
