/* SPDX-License-Identifier: MIT */
/*
 * Users and groups as an operator names them: a name or a number where an
 * id is asked (--uid, --gid, as allow_users and allow_groups in
 * cryptod.conf take them), and the name beside an id in listings.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "table.h"

/* A decimal id below (uint32_t)-1 (that one is "no id" to the kernel). */
static int parse_num(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v >= UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int cli_parse_uid(const char *s, uint32_t *out)
{
	struct passwd pw, *r = NULL;
	char buf[4096];

	if (!*s)
		return -EINVAL;
	if (!parse_num(s, out))
		return 0;
	if (getpwnam_r(s, &pw, buf, sizeof(buf), &r) || !r)
		return -ENOENT;
	*out = (uint32_t)r->pw_uid;
	return 0;
}

int cli_parse_gid(const char *s, uint32_t *out)
{
	struct group gr, *r = NULL;
	char buf[16384];

	if (!*s)
		return -EINVAL;
	if (!parse_num(s, out))
		return 0;
	if (getgrnam_r(s, &gr, buf, sizeof(buf), &r) || !r)
		return -ENOENT;
	*out = (uint32_t)r->gr_gid;
	return 0;
}

const char *cli_user_name(uint32_t uid, char *buf, size_t len)
{
	struct passwd pw, *r = NULL;
	char tmp[4096];

	buf[0] = '\0';
	if (!getpwuid_r((uid_t)uid, &pw, tmp, sizeof(tmp), &r) && r)
		snprintf(buf, len, "%s", r->pw_name);
	return buf;
}

const char *cli_group_name(uint32_t gid, char *buf, size_t len)
{
	struct group gr, *r = NULL;
	char tmp[16384];

	buf[0] = '\0';
	if (!getgrgid_r((gid_t)gid, &gr, tmp, sizeof(tmp), &r) && r)
		snprintf(buf, len, "%s", r->gr_name);
	return buf;
}

void cli_json_name(const char *name)
{
	if (*name)
		json_str(name);
	else
		fputs("null", stdout);
}
