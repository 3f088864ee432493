/* SPDX-License-Identifier: MIT */
/*
 * A digest or MAC message (prov_digest.c, prov_mac.c). Data is buffered
 * here until PH_HOLD bytes: a short message is then one op at final, and
 * a context can be duplicated (HMAC and TLS copy digest contexts midway)
 * while it is buffered. Past PH_HOLD the message becomes a daemon stream,
 * and can no longer be duplicated.
 *
 * An update never fails: a failure is kept and final reports it (and the
 * updates in between do nothing). CPython 3.11's hashlib calls
 * EVP_DigestUpdate for 2 KiB and more with the GIL released and raises
 * its exception there without it if the update fails: the interpreter
 * crashes (SIGSEGV). A daemon that stops under a Python program's digest
 * must cost it a ValueError at digest(), not the process.
 */
#ifndef CRYPTOD_PROV_HASH_H
#define CRYPTOD_PROV_HASH_H

#include "prov.h"

#define PH_HOLD (64u << 10)

/* The in-process path (min_size, fallback), the owner's. */
struct ph_sw_ops {
	int (*begin)(void *owner);
	int (*update)(void *owner, const uint8_t *data, size_t len);
	int (*final)(void *owner, uint8_t *out, size_t *outl);
};

struct ph_msg {
	struct prov *p; /* not owned */
	enum cc_alg alg;
	const char *name;   /* for errors */
	const uint8_t *key; /* MAC: the owner's key; NULL for digests */
	size_t key_len;
	const struct ph_sw_ops *sw_ops;
	void *owner;

	uint8_t *buf; /* owned */
	size_t len, cap;
	struct pio_stream *st;	/* owned */
	struct prov_conn *conn; /* a reference while st is open */
	struct prov_sess sess;	/* MAC: the key's session */
	int sw;
	int failed;	   /* an update's error (-errno / CC_ERR), for final */
	int failed_reason; /* PROV_R_* to raise it with */
};

int ph_update(struct ph_msg *m, const void *data, size_t len);
/* Writes the whole tag (tag_len bytes) to out. */
int ph_final(struct ph_msg *m, uint8_t *out, size_t *outl);
void ph_reset(struct ph_msg *m);
/* dst starts as a byte copy of src; 0 when src cannot be copied. */
int ph_dup(struct ph_msg *dst, const struct ph_msg *src);
void ph_free(struct ph_msg *m);

#endif
