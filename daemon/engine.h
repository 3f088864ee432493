/* SPDX-License-Identifier: MIT */
/*
 * Engine ops table. One file per backend (engine_<name>.c) fills a
 * struct engine with designated initialisers. Engines never see the
 * shared memory's descriptors: the worker hands them engine_ops built from
 * validated private copies, with pointers already bounds-checked.
 */
#ifndef CRYPTOD_ENGINE_H
#define CRYPTOD_ENGINE_H

#include <stddef.h>
#include <stdint.h>

struct session;

/* Algorithms, as in the control protocol (cryptod.proto Algorithm). */
enum alg {
	ALG_AES_GCM = 1,
	ALG_NULL = 2,
	ALG_MAX_,
};

/* One validated operation. Pointers point into the queue's arena. */
struct engine_op {
	const struct session *sess;
	const uint8_t *src;
	uint8_t *dst; /* == src for in place */
	const uint8_t *aad;
	uint8_t *tag;
	const uint8_t *iv; /* private copy, not shared memory */
	uint32_t len;
	uint32_t aad_len;
	uint8_t iv_len;
	uint8_t tag_len;
	uint8_t op;	/* CRD_OP_ENCRYPT / CRD_OP_DECRYPT */
	int32_t status; /* out: CRD_ST_OK or an error */
};

enum { ENGINE_NAME_MAX = 16, ENGINE_MAX = 4 };

struct engine {
	const char *name;
	/* Is the engine usable on this host? 0, or -errno with a reason. */
	int (*probe)(char *why, size_t why_len);
	/* Does it implement alg at all? */
	int (*supports)(enum alg alg);
	/* Expand key into sess->key (<= sizeof sess->key). 0 or -EINVAL. */
	int (*session_init)(struct session *sess, const uint8_t *key,
			    size_t key_len);
	/* Per-op parameter check beyond bounds (IV length, ...): CRD_ST_*. */
	int (*op_check)(const struct session *sess, uint8_t iv_len,
			uint32_t aad_len);
	/* Per-worker state (an IMB_MGR for aesni); NULL on failure. */
	void *(*worker_init)(void);
	void (*worker_fini)(void *wctx);
	/* Run n ops; set each op's status. Never fails as a whole. */
	void (*process)(void *wctx, struct engine_op *ops, unsigned n);
	/* Release what probe set up (optional). */
	void (*fini)(void);
};

extern const struct engine engine_aesni;
extern const struct engine engine_null;

/* Registry (engine.c). Index is stable for the process lifetime. */
unsigned engine_count(void);
const struct engine *engine_get(unsigned idx);
/* Available engines probed at start-up; returns the count usable. */
int engine_probe_all(void);
void engine_fini_all(void);
int engine_available(unsigned idx);
const char *engine_unavailable_why(unsigned idx);
/* name NULL or "" = fastest available for alg. Returns index or -errno
 * (-ENOENT unknown name, -EOPNOTSUPP alg not supported, -ENODEV down). */
int engine_select(enum alg alg, const char *name);

/* Constant-time comparison: 0 when equal. */
int engine_ct_memcmp(const void *a, const void *b, size_t n);

#endif
