/* SPDX-License-Identifier: MIT */
/*
 * Named keys on the control socket: start-up (the KEK from keys.kek, the
 * directory from keys.dir), the KeyRequest operations with their access
 * policy, and sessions opened on a key by name. docs/keys.md is the
 * reference. Control thread only.
 *
 * Access policy: create, import, unwrap, rotate, wrap and delete need an
 * administrator (uid 0 or the daemon's own uid, client_is_admin). Using a
 * key needs the peer's uid, primary gid or a supplementary group on the
 * key's ACL (administrators too: the ACL is the whole rule); list and
 * show answer administrators with every key and others with the keys
 * they may use. A non-administrator asking for a key that does not exist
 * or that it may not use gets the same answer (CRD_ST_ACCESS), so names
 * do not leak.
 */
#ifndef CRYPTOD_KEYREQ_H
#define CRYPTOD_KEYREQ_H

#include <cryptod/compiler.h>

#include "client.h"
#include "config.h"
#include "session.h"
#include "wire.h"

/* 0 with named keys off (keys.kek empty) or loaded; -errno (logged) when
 * the KEK or the directory is unusable: the daemon does not start. */
CRD_MUST_CHECK int keyreq_start(const struct config *cfg);
void keyreq_stop(void);
int keyreq_enabled(void);

/* Answer one KeyRequest; < 0 only when the connection must close. */
int keyreq_handle(struct client *c, uint32_t seq, const Cryptod__KeyRequest *m);

/*
 * A session on the named key m->key_name: *out on success (owning a
 * reference on the key), *version the version it runs. Else a negative
 * code for the Error and msg (msglen bytes) says why.
 */
CRD_MUST_CHECK int keyreq_session(struct client *c,
				  const Cryptod__CreateSession *m,
				  struct session **out, uint32_t *version,
				  char *msg, size_t msglen);

#endif
