/* SPDX-License-Identifier: MIT */
/*
 * Running without systemd: the set-up root does for the daemon, then the
 * drop to its user (privdrop.h).
 */
#include "privdrop.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bounds.h"
#include "config.h"
#include "ctl.h"
#include "log.h"

int priv_lookup(const char *name, struct priv_user *u)
{
	struct passwd pw, *r = NULL;
	char buf[4096], *end;

	memset(u, 0, sizeof(*u));
	if (!*name)
		return -ENOENT;
	unsigned long v = strtoul(name, &end, 10);
	int err = *end ? getpwnam_r(name, &pw, buf, sizeof(buf), &r)
		       : getpwuid_r((uid_t)v, &pw, buf, sizeof(buf), &r);
	if (err)
		return -err;
	if (!r)
		return -ENOENT;
	u->uid = r->pw_uid;
	u->gid = r->pw_gid;
	snprintf(u->name, sizeof(u->name), "%s", r->pw_name);
	return 0;
}

int priv_raise_memlock(void)
{
	const rlim_t need = (rlim_t)PRIV_MEMLOCK_MIB << 20;
	struct rlimit rl, want;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		return -errno;
	want = rl;
	if (want.rlim_cur != RLIM_INFINITY && want.rlim_cur < need)
		want.rlim_cur = need;
	if (want.rlim_max != RLIM_INFINITY && want.rlim_max < want.rlim_cur)
		want.rlim_max = want.rlim_cur;
	if (!setrlimit(RLIMIT_MEMLOCK, &want))
		return 0;
	/* Root without CAP_SYS_RESOURCE (a container) cannot raise the hard
	 * limit: take what it allows, and say so. */
	int err = -errno;
	rl.rlim_cur = rl.rlim_max;
	(void)setrlimit(RLIMIT_MEMLOCK, &rl);
	return err;
}

int priv_make_dir(const char *dir, mode_t mode, uid_t uid, gid_t gid)
{
	if (mkdir(dir, 0700) < 0)
		return errno == EEXIST ? 0 : -errno;
	/* Ours, just made: whatever the umask, the mode asked for. */
	if (chown(dir, uid, gid) < 0 || chmod(dir, mode) < 0)
		return -errno;
	return 0;
}

int priv_drop(const struct priv_user *u)
{
	if (setgroups(0, NULL) < 0)
		return -errno;
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		return -errno;
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		return -errno;
	/* Nothing left to regain root with (unless u is root: told to). */
	if (u->uid && (setuid(0) == 0 || seteuid(0) == 0))
		return -EPERM;
	uid_t r, e, s;
	gid_t gr, ge, gs;
	if (getresuid(&r, &e, &s) < 0 || getresgid(&gr, &ge, &gs) < 0)
		return -errno;
	if (r != u->uid || e != u->uid || s != u->uid || gr != u->gid ||
	    ge != u->gid || gs != u->gid || getgroups(0, NULL) != 0)
		return -EPERM;
	return 0;
}

/*
 * Without systemd, started as root with --user: what the units do before
 * the daemon runs (tmpfiles.d's /run/cryptod 0755 root:root, the socket
 * of cryptod.socket with its group, LimitMEMLOCK=, StateDirectory=
 * cryptod 0700 for named keys), then the drop to u for good, before any
 * engine, key or client is touched. *bound: the socket is bound (main
 * serves it and must not chown it again). 0, or -errno after logging
 * why.
 */
static int setup_then_drop(const struct config *cfg, const struct priv_user *u,
			   int *bound)
{
	char dir[sizeof(cfg->socket)];
	int err;

	*bound = 0;
	/* Under socket activation the manager made the socket. */
	if (!getenv("LISTEN_FDS")) {
		snprintf(dir, sizeof(dir), "%s", cfg->socket);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			err = priv_make_dir(dir, 0755, 0, 0);
			if (err) {
				log_err("socket directory %s: %s", dir,
					strerror(-err));
				return err == -EINVAL ? -EIO : err;
			}
		}
		err = ctl_bind(cfg->socket, cfg->socket_mode);
		if (err) {
			log_err("cannot listen on %s: %s%s", cfg->socket,
				strerror(-err),
				err == -EADDRINUSE
					? " (another cryptod is serving it)"
					: "");
			return err == -EINVAL ? -EIO : err;
		}
		*bound = 1;
		gid_t g = cfg->has_socket_group ? cfg->socket_group : u->gid;
		err = ctl_set_group(g);
		if (err) {
			log_err("socket group %u: %s", (unsigned)g,
				strerror(-err));
			return err == -EINVAL ? -EIO : err;
		}
	}
	err = priv_raise_memlock();
	if (err)
		log_warn("cannot raise RLIMIT_MEMLOCK to %d MiB (%s): without "
			 "CAP_SYS_RESOURCE, as in a container, the caller's "
			 "hard limit must allow it (docker run --ulimit "
			 "memlock=%d:%d)",
			 PRIV_MEMLOCK_MIB, strerror(-err),
			 PRIV_MEMLOCK_MIB << 20, PRIV_MEMLOCK_MIB << 20);
	/* Named keys in the default place: its parent, as StateDirectory=. */
	const char *sd = getenv("STATE_DIRECTORY");
	if (cfg->keys.kek[0] && !cfg->keys.dir[0] && !(sd && *sd)) {
		snprintf(dir, sizeof(dir), "%s", CONFIG_KEY_DIR_DEFAULT);
		*strrchr(dir, '/') = '\0';
		err = priv_make_dir(dir, 0700, u->uid, u->gid);
		if (err) {
			log_err("state directory %s: %s", dir, strerror(-err));
			return err == -EINVAL ? -EIO : err;
		}
	}
	err = priv_drop(u);
	if (err) {
		log_err("cannot become user %s (uid %u, gid %u): %s", u->name,
			(unsigned)u->uid, (unsigned)u->gid, strerror(-err));
		return err == -EINVAL ? -EIO : err;
	}
	log_info("running as user %s (uid %u, gid %u), no supplementary "
		 "groups",
		 u->name, (unsigned)u->uid, (unsigned)u->gid);
	return 0;
}

/*
 * --user: who the daemon runs as. Started as root: u (drop 1), or root
 * when told so (--user root), or root with a warning (no --user). Not
 * root: --user must name the user it is. 0, or -EINVAL after logging.
 */
static int user_resolve(const char *name, struct priv_user *u, int *drop)
{
	*drop = 0;
	if (!name) {
		if (geteuid() == 0)
			log_warn("running as root: start it with --user "
				 "cryptod to run as the package's user "
				 "(cryptod(8), WITHOUT SYSTEMD), or --user "
				 "root to keep root without this warning");
		return 0;
	}
	int err = priv_lookup(name, u);
	if (err) {
		log_err("--user %s: %s", name,
			err == -ENOENT ? "no such user" : strerror(-err));
		return -EINVAL;
	}
	if (geteuid() == 0) {
		*drop = u->uid != 0;
		return 0;
	}
	if (u->uid != geteuid()) {
		log_err("--user %s: only root can become another user (running "
			"as uid %u)",
			name, (unsigned)geteuid());
		return -EINVAL;
	}
	return 0;
}

int priv_start(const char *user, const struct config *cfg, int *bound)
{
	struct priv_user u;
	int drop;

	*bound = 0;
	int err = user_resolve(user, &u, &drop);
	return err || !drop ? err : setup_then_drop(cfg, &u, bound);
}
