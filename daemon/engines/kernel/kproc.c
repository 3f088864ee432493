/* SPDX-License-Identifier: MIT */
#include "kproc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One /proc/crypto entry: the fields we use. */
struct kproc_entry {
	char name[KPROC_NAME_MAX], driver[KPROC_NAME_MAX], type[KPROC_NAME_MAX];
	int prio, internal, failed, has_prio;
};

/* "key   : value" → value copied into out (trailing blanks trimmed). */
static int kproc_field(const char *line, size_t len, const char *key, char *out,
		       size_t n)
{
	size_t kl = strlen(key);
	if (len < kl || memcmp(line, key, kl))
		return 0;
	size_t i = kl;
	while (i < len && line[i] == ' ')
		i++;
	if (i >= len || line[i] != ':')
		return 0;
	i++;
	while (i < len && line[i] == ' ')
		i++;
	size_t vl = len - i;
	while (vl && (line[i + vl - 1] == ' ' || line[i + vl - 1] == '\t'))
		vl--;
	if (vl >= n)
		vl = n - 1;
	memcpy(out, line + i, vl);
	out[vl] = '\0';
	return 1;
}

static int kproc_match(const struct kproc_entry *e, const char *name,
		       const char *type, enum kproc_want want)
{
	if (!e->name[0] || !e->driver[0] || !e->has_prio || e->internal ||
	    e->failed || strcmp(e->name, name) || strcmp(e->type, type))
		return 0;
	int pcrypt = !strncmp(e->driver, "pcrypt(", 7);
	return want == KPROC_PCRYPT ? pcrypt : !pcrypt;
}

int kproc_find(const char *text, const char *name, const char *type,
	       enum kproc_want want, char *driver, size_t n, int *prio)
{
	struct kproc_entry e, best;
	int found = 0;
	memset(&e, 0, sizeof(e));
	for (const char *p = text;;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char v[KPROC_NAME_MAX];
		if (len == 0) { /* blank line or end: one entry is complete */
			if (kproc_match(&e, name, type, want) &&
			    (!found || e.prio > best.prio)) {
				best = e;
				found = 1;
			}
			memset(&e, 0, sizeof(e));
		} else if (kproc_field(p, len, "name", v, sizeof(v))) {
			memcpy(e.name, v, sizeof(e.name));
		} else if (kproc_field(p, len, "driver", v, sizeof(v))) {
			memcpy(e.driver, v, sizeof(e.driver));
		} else if (kproc_field(p, len, "type", v, sizeof(v))) {
			memcpy(e.type, v, sizeof(e.type));
		} else if (kproc_field(p, len, "priority", v, sizeof(v))) {
			char *end;
			long pr = strtol(v, &end, 10);
			e.has_prio = end != v && *end == '\0';
			e.prio = (int)pr;
		} else if (kproc_field(p, len, "internal", v, sizeof(v))) {
			e.internal = !strcmp(v, "yes");
		} else if (kproc_field(p, len, "selftest", v, sizeof(v))) {
			e.failed = strcmp(v, "passed") != 0;
		}
		if (!nl) {
			if (kproc_match(&e, name, type, want) &&
			    (!found || e.prio > best.prio)) {
				best = e;
				found = 1;
			}
			break;
		}
		p = nl + 1;
	}
	if (!found)
		return -ENOENT;
	if (strlen(best.driver) >= n)
		return -ENAMETOOLONG;
	strcpy(driver, best.driver);
	if (prio)
		*prio = best.prio;
	return 0;
}

int kproc_find_now(const char *name, const char *type, enum kproc_want want,
		   char *driver, size_t n, int *prio)
{
	char *text = kproc_read("/proc/crypto");
	int err =
		kproc_find(text ? text : "", name, type, want, driver, n, prio);
	free(text);
	return err;
}

char *kproc_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				errno = ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			buf = NULL;
			errno = e;
			break;
		}
		if (r == 0) {
			buf[len] = '\0';
			break;
		}
		len += (size_t)r;
	}
	close(fd);
	return buf;
}
