/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cryptod/clock.h>

#include "bounds.h"

static enum log_level log_max = LOG_INFO_; /* atomic: reload vs workers */
static int log_journal; /* stderr is the journal: prefix <N>, no time stamp */

static const char *const level_names[8] = {
	[3] = "error", [4] = "warn", [6] = "info", [7] = "debug"
};

/*
 * $JOURNAL_STREAM is "device:inode" of the journal stream systemd gave
 * us; it is inherited by everything we start too, so only trust it when
 * stderr is still that stream (systemd.exec(5) asks for this check).
 */
int log_stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) < 0)
		return 0;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

void log_init(enum log_level max)
{
	log_set_level(max);
	log_journal = log_stderr_is_journal();
}

void log_set_level(enum log_level max)
{
	crd_store_relaxed_n(&log_max, max);
}

static int log_enabled(enum log_level lvl)
{
	return lvl <= crd_load_relaxed_n(&log_max);
}

const char *log_level_name(enum log_level lvl)
{
	return (unsigned)lvl < 8 && level_names[lvl] ? level_names[lvl] : "?";
}

int log_parse_level(const char *s, enum log_level *out)
{
	static const enum log_level lvls[] = { LOG_ERR_, LOG_WARN_, LOG_INFO_,
					       LOG_DEBUG_ };
	for (size_t i = 0; i < sizeof(lvls) / sizeof(lvls[0]); i++) {
		if (!strcasecmp(s, level_names[lvls[i]])) {
			*out = lvls[i];
			return 0;
		}
	}
	return -1;
}

size_t log_escape(char *dst, size_t cap, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (!cap)
		return 0;
	for (const unsigned char *p = (const unsigned char *)src; p && *p;
	     p++) {
		char e[4];
		size_t n = 1;
		e[0] = (char)*p;
		if (*p < 0x20 || *p >= 0x7f) {
			e[0] = '\\';
			e[1] = *p == '\n'   ? 'n'
			       : *p == '\r' ? 'r'
			       : *p == '\t' ? 't'
					    : 'x';
			n = 2;
			if (e[1] == 'x') {
				e[2] = hex[*p >> 4];
				e[3] = hex[*p & 15];
				n = 4;
			}
		}
		if (o + n >= cap) /* an escape goes whole or not at all */
			break;
		memcpy(dst + o, e, n);
		o += n;
	}
	dst[o] = '\0';
	return o;
}

/* The one sink: every line is escaped here (log.h), so no caller has to
 * know which of its strings came from a client. */
static void log_emit(enum log_level lvl, const char *line)
{
	char clean[LOG_LINE_MAX * 4]; /* every byte may become 4 */
	log_escape(clean, sizeof(clean), line);
	/* One fprintf per line: stdio locks the stream, so lines from
	 * several threads do not interleave. */
	if (log_journal)
		fprintf(stderr, "<%d>%s\n", (int)lvl, clean);
	else
		fprintf(stderr, "cryptod[%s]: %s\n", level_names[lvl], clean);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	if (!log_enabled(lvl))
		return;
	char line[LOG_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_emit(lvl, line);
}

/*
 * Rate limiting per peer uid: at most LOG_RATE_BURST lines per uid per
 * LOG_RATE_WINDOW_S, for any set of uids. Each uid has a slot of its own,
 * matched exactly; a slot is taken over only once its window has ended
 * (when its count would start again anyway). With every slot in a live
 * window, uids without one share a single overflow slot with the same
 * limit: the total stays bounded, and a uid gets at most its own limit
 * plus the overflow's. Only more than LOG_SLOTS uids logging within one
 * window (which takes that many accounts) reach the overflow at all.
 */
enum { LOG_SLOTS = 256 };

struct rate_slot {
	uid_t uid;
	int used;
	uint64_t window; /* start, seconds */
	unsigned n, dropped;
};

static struct {
	pthread_mutex_t lock;
	struct rate_slot s[LOG_SLOTS];
	struct rate_slot overflow; /* uid unused */
} rate = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t mono_s(void)
{
	return crd_now_ms() / 1000;
}

/* uid's slot: its own, a free or expired one taken over, else the
 * overflow. Caller holds rate.lock. */
static struct rate_slot *rate_slot(uid_t uid, uint64_t now)
{
	struct rate_slot *spare = NULL;
	for (unsigned i = 0; i < LOG_SLOTS; i++) {
		struct rate_slot *r = &rate.s[i];
		if (r->used && r->uid == uid)
			return r;
		if (!spare &&
		    (!r->used || now - r->window >= LOG_RATE_WINDOW_S))
			spare = r;
	}
	if (!spare)
		return &rate.overflow;
	memset(spare, 0, sizeof(*spare));
	spare->used = 1;
	spare->uid = uid;
	spare->window = now;
	return spare;
}

void log_peer(uid_t uid, enum log_level lvl, const char *fmt, ...)
{
	if (!log_enabled(lvl))
		return;
	uint64_t now = mono_s();
	unsigned dropped = 0;

	pthread_mutex_lock(&rate.lock);
	struct rate_slot *r = rate_slot(uid, now);
	if (now - r->window >= LOG_RATE_WINDOW_S) {
		dropped = r->dropped;
		r->window = now;
		r->n = 0;
		r->dropped = 0;
	}
	int ok = r->n < LOG_RATE_BURST;
	if (ok)
		r->n++;
	else
		r->dropped++;
	int shared = r == &rate.overflow;
	pthread_mutex_unlock(&rate.lock);

	if (dropped) {
		char note[128];
		if (shared)
			snprintf(note, sizeof(note),
				 "%u log line(s) of many uids suppressed "
				 "(more than %d in %d s)",
				 dropped, LOG_RATE_BURST, LOG_RATE_WINDOW_S);
		else
			snprintf(note, sizeof(note),
				 "uid %u: %u log line(s) suppressed (more "
				 "than %d in %d s)",
				 (unsigned)uid, dropped, LOG_RATE_BURST,
				 LOG_RATE_WINDOW_S);
		log_emit(LOG_WARN_, note);
	}
	if (!ok)
		return;
	char line[LOG_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_emit(lvl, line);
}
