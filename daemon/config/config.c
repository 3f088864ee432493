/* SPDX-License-Identifier: MIT */
/*
 * Configuration file parser. Format (docs/config.md):
 *
 *   # comment
 *   key = value          # a '#' after white space starts a comment too
 *
 * Keys are lower case; white space around key and value is dropped; a
 * value is everything up to the end of the line or an inline comment.
 * Every key may appear once. Nothing else is accepted. The keys
 * themselves are config_keys.c's table; config_types.c parses a value by
 * its key's type.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bounds.h"
#include "engine.h"
#include "session.h"

/* ---- lines ---- */

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

static int config_line(struct config *c, char *line, const char *name,
		       unsigned lineno, char *err, size_t errlen)
{
	char msg[CONFIG_ERR_MAX - 64];
	/* A '#' at the start or after white space starts a comment. */
	for (char *p = line; *p; p++) {
		if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			break;
		}
	}
	char *s = trim(line);
	if (!*s)
		return 0;
	for (char *p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\t') {
			snprintf(msg, sizeof(msg), "control character in line");
			goto bad;
		}
	}
	char *eq = strchr(s, '=');
	if (!eq) {
		if (s[0] == '[')
			snprintf(msg, sizeof(msg),
				 "sections are not used: write "
				 "'section.key = value'");
		else
			snprintf(msg, sizeof(msg),
				 "expected 'key = value', got '%.64s'", s);
		goto bad;
	}
	*eq = '\0';
	char *key = trim(s), *val = trim(eq + 1);
	int k = config_key_find(key);
	if (k < 0) {
		if (!strncmp(key, "route.", 6))
			snprintf(msg, sizeof(msg),
				 "unknown algorithm in '%.64s' (see cryptoctl "
				 "engines)",
				 key);
		else
			snprintf(msg, sizeof(msg), "unknown key '%.64s'", key);
		goto bad;
	}
	if (config_is_set(c, k) && c->line[k]) {
		snprintf(msg, sizeof(msg),
			 "duplicate key '%s' (first set on line %u)", key,
			 c->line[k]);
		goto bad;
	}
	if (!*val && !config_key_empty_ok(k)) {
		snprintf(msg, sizeof(msg), "%s: empty value", key);
		goto bad;
	}
	if (config_store(c, k, val, msg, sizeof(msg)))
		goto bad;
	config_mark_set(c, k, 1);
	c->line[k] = lineno;
	return 0;
bad:
	snprintf(err, errlen, "%s:%u: %s", name, lineno, msg);
	return -EINVAL;
}

int config_parse(struct config *c, const char *text, size_t len,
		 const char *name, char *err, size_t errlen)
{
	char line[CONFIG_LINE_MAX + 1];
	unsigned lineno = 0;
	size_t i = 0;
	/* Keys this text sets: duplicates are errors only within it. */
	uint64_t before[CONFIG_SET_WORDS];
	memcpy(before, c->set, sizeof(before));
	unsigned before_line[CK_N];
	memcpy(before_line, c->line, sizeof(before_line));
	memset(c->line, 0, sizeof(c->line));
	int rc = 0;

	while (i < len && !rc) {
		lineno++;
		size_t n = 0;
		while (i < len && text[i] != '\n') {
			if (text[i] == '\0') {
				snprintf(err, errlen, "%s:%u: NUL byte", name,
					 lineno);
				rc = -EINVAL;
				break;
			}
			if (n == CONFIG_LINE_MAX) {
				snprintf(err, errlen,
					 "%s:%u: line longer than %d bytes",
					 name, lineno, CONFIG_LINE_MAX);
				rc = -EINVAL;
				break;
			}
			line[n++] = text[i++];
		}
		if (rc)
			break;
		i++; /* the '\n' */
		line[n] = '\0';
		rc = config_line(c, line, name, lineno, err, errlen);
	}
	for (unsigned k = 0; k < CK_N; k++)
		if (!c->line[k] && (before[k / 64] >> (k % 64) & 1))
			c->line[k] = before_line[k];
	explicit_bzero(line, sizeof(line));
	return rc;
}

int config_load(struct config *c, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	char *buf = malloc(CONFIG_FILE_MAX + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	size_t len = 0;
	int rc = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, CONFIG_FILE_MAX + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		len += n;
		if (len > CONFIG_FILE_MAX) {
			rc = -EFBIG;
			snprintf(err, errlen, "%s: larger than %d bytes", path,
				 CONFIG_FILE_MAX);
			break;
		}
	}
	close(fd);
	if (!rc)
		rc = config_parse(c, buf, len, path, err, errlen);
	free(buf);
	return rc;
}

int config_set(struct config *c, const char *key, const char *value,
	       const char *origin, char *err, size_t errlen)
{
	char msg[CONFIG_ERR_MAX - 64];
	int k = config_key_find(key);
	if (k < 0) {
		snprintf(err, errlen, "%s: unknown key '%.64s'", origin, key);
		return -EINVAL;
	}
	char v[CONFIG_LINE_MAX];
	if (strlen(value) >= sizeof(v)) {
		snprintf(err, errlen, "%s: value too long", origin);
		return -EINVAL;
	}
	for (const char *p = value; *p; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\t') {
			snprintf(err, errlen, "%s: control character in value",
				 origin);
			return -EINVAL;
		}
	}
	snprintf(v, sizeof(v), "%s", value);
	char *t = trim(v);
	if (config_store(c, k, t, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", origin, msg);
		return -EINVAL;
	}
	config_mark_set(c, k, 1);
	c->line[k] = 0;
	return 0;
}
