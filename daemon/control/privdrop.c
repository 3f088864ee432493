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
