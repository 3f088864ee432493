/* SPDX-License-Identifier: MIT */
/*
 * Running without systemd (docs/without-systemd.md): a daemon started as
 * root does what the units do for it under systemd (the socket directory
 * of tmpfiles.d, the socket of cryptod.socket, LimitMEMLOCK=, the state
 * directory of StateDirectory=), then becomes --user: its uid, its
 * primary group, no supplementary groups, for good.
 */
#ifndef CRYPTOD_PRIVDROP_H
#define CRYPTOD_PRIVDROP_H

#include <cryptod/compiler.h>

#include <sys/types.h>

struct priv_user {
	uid_t uid;
	gid_t gid; /* the user's primary group */
	char name[64];
};

/* A user name or number: 0, -ENOENT (no such user), -errno. */
CRD_MUST_CHECK int priv_lookup(const char *name, struct priv_user *u);

/* Raise RLIMIT_MEMLOCK (soft and hard) to at least PRIV_MEMLOCK_MIB: as
 * root, before the drop, which cannot raise a hard limit. 0, or -errno
 * (-EPERM without CAP_SYS_RESOURCE) with the soft limit at the hard. */
CRD_MUST_CHECK int priv_raise_memlock(void);

/* Create dir (one level) with exactly mode, owned by uid:gid; an existing
 * one is left as it is (it may be /tmp: not ours to change). 0 or
 * -errno. */
CRD_MUST_CHECK int priv_make_dir(const char *dir, mode_t mode, uid_t uid,
				 gid_t gid);

/* Become u: supplementary groups cleared, then gid, then uid (real,
 * effective and saved), checked to hold: a root that could come back is
 * refused. 0 or -errno. */
CRD_MUST_CHECK int priv_drop(const struct priv_user *u);

struct config;

/*
 * main's one call, after the configuration is read and before any engine
 * or key: resolve --user (user; NULL: none given) and, started as root
 * with a user other than root, do the set-up above with cfg's socket,
 * mode, group and key settings, then drop. *bound: the socket is bound
 * (ctl_start serves it; main must not chown it). 0, -EINVAL (an unknown
 * user or one only root could become: the configuration's to fix), or
 * another -errno; each logged.
 */
CRD_MUST_CHECK int priv_start(const char *user, const struct config *cfg,
			      int *bound);

#endif
