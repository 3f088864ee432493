/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: descriptor validation (daemon/data/desc.c) on bytes from a
 * client. Input: a 64-byte submission entry, then arena contents (segment
 * lists and IVs longer than 16 bytes live there). Sessions: AES-GCM
 * (aesni, IVs of 1..128 bytes), AES-XTS (openssl), authenc and null,
 * chosen by the entry's session id. Whatever the bytes, desc_resolve must
 * return a defined status, and on success every pointer it hands the
 * engines must lie inside the arena, except the IV, which must be a
 * private copy: in the entry's copy or the list scratch, never the arena.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "desc.h"
#include "engine.h"
#include "keystore.h"
#include "log.h"
#include "session.h"

enum { ARENA = 1 << 16 };

static struct session *sess[4];
static uint8_t *arena;

static void setup(void)
{
	static const uint8_t key[64] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static const uint8_t akey[20] = { 9 };
	log_init(LOG_ERR_);
	engine_probe_all();
	ks_init(16);
	struct session_params p[4] = {
		{ .alg = CRD_ALG_AES_GCM, .key = key, .key_len = 16 },
		{ .alg = CRD_ALG_AES_XTS, .key = key, .key_len = 64 },
		{ .alg = CRD_ALG_AES_CBC_HMAC_SHA1,
		  .key = key,
		  .key_len = 16,
		  .auth_key = akey,
		  .auth_key_len = 20 },
		{ .alg = CRD_ALG_NULL },
	};
	for (int i = 0; i < 4; i++)
		if (session_create(&p[i], &sess[i]))
			abort();
	arena = malloc(ARENA);
}

static int inside(const uint8_t *p, uint32_t len)
{
	return p >= arena && (uint64_t)(p - arena) + len <= ARENA;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!arena)
		setup();
	struct crd_sqe e;
	if (size < sizeof(e))
		return 0;
	memcpy(&e, data, sizeof(e));
	size_t rest = size - sizeof(e);
	memset(arena, 0, ARENA);
	memcpy(arena, data + sizeof(e), rest < ARENA ? rest : ARENA);

	const struct session *s = e.session ? sess[e.session % 4] : NULL;
	struct engine_op op;
	static struct desc_sgl sg;
	int st = desc_resolve(&e, arena, ARENA, s, &op, &sg);
	if (st != op.status)
		abort();
	switch (st) {
	case CRD_ST_OK:
		break;
	case CRD_ST_BAD_DESC:
	case CRD_ST_NO_SESSION:
	case CRD_ST_BAD_RANGE:
	case CRD_ST_BAD_PARAM:
		return 0;
	default:
		abort(); /* no other status may come out of validation */
	}
	/* Everything the engines will touch is inside the arena... */
	if (!inside(op.aad, op.aad_len) || !inside(op.tag, op.tag_len))
		abort();
	/* ...but the IV, read once into private memory. */
	const int arena_iv = e.flags & CRD_SQE_F_ARENA_IV;
	if (op.iv_len > (arena_iv ? CRD_IV_ARENA_MAX : CRD_IV_MAX) ||
	    op.iv != (arena_iv ? sg.iv : e.iv) ||
	    (arena_iv &&
	     memcmp(op.iv, arena + crd_sqe_iv_off(e.iv), op.iv_len)))
		abort();
	if (!op.sgl && (!inside(op.src, op.len) || !inside(op.dst, op.len)))
		abort();
	for (unsigned i = 0; op.sgl && i < sg.nsrc; i++)
		if (!inside(arena + sg.src[i].off, sg.src[i].len))
			abort();
	for (unsigned i = 0; op.sgl && i < sg.ndst; i++)
		if (!inside(arena + sg.dst[i].off, sg.dst[i].len))
			abort();
	return 0;
}
