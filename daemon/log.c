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
	__atomic_store_n(&log_max, max, __ATOMIC_RELAXED);
}

static int log_enabled(enum log_level lvl)
{
	return lvl <= __atomic_load_n(&log_max, __ATOMIC_RELAXED);
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

static void log_emit(enum log_level lvl, const char *line)
{
	/* One fprintf per line: stdio locks the stream, so lines from
	 * several threads do not interleave. */
	if (log_journal)
		fprintf(stderr, "<%d>%s\n", (int)lvl, line);
	else
		fprintf(stderr, "cryptod[%s]: %s\n", level_names[lvl], line);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	if (!log_enabled(lvl))
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_emit(lvl, line);
}

/* Rate limiting per peer uid. Buckets are hashed by uid; two uids that
 * share a bucket take it over from each other, which can only let a few
 * more lines through, never silence a uid for good. */
enum { LOG_BUCKETS = 64 };

static struct {
	pthread_mutex_t lock;
	struct {
		uid_t uid;
		int used;
		uint64_t window; /* start, seconds */
		unsigned n, dropped;
	} b[LOG_BUCKETS];
} rate = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

void log_peer(uid_t uid, enum log_level lvl, const char *fmt, ...)
{
	if (!log_enabled(lvl))
		return;
	uint64_t now = mono_s();
	unsigned dropped = 0;

	pthread_mutex_lock(&rate.lock);
	unsigned h = (uid * 2654435761u) >> 26; /* 6 bits: LOG_BUCKETS */
	_Static_assert(LOG_BUCKETS == 64, "hash width");
	if (!rate.b[h].used || rate.b[h].uid != uid) {
		rate.b[h].used = 1;
		rate.b[h].uid = uid;
		rate.b[h].window = now;
		rate.b[h].n = 0;
		rate.b[h].dropped = 0;
	} else if (now - rate.b[h].window >= LOG_RATE_WINDOW_S) {
		dropped = rate.b[h].dropped;
		rate.b[h].window = now;
		rate.b[h].n = 0;
		rate.b[h].dropped = 0;
	}
	int ok = rate.b[h].n < LOG_RATE_BURST;
	if (ok)
		rate.b[h].n++;
	else
		rate.b[h].dropped++;
	pthread_mutex_unlock(&rate.lock);

	if (dropped) {
		char note[128];
		snprintf(note, sizeof(note),
			 "uid %u: %u log line(s) suppressed (more than %d in "
			 "%d s)",
			 (unsigned)uid, dropped, LOG_RATE_BURST,
			 LOG_RATE_WINDOW_S);
		log_emit(LOG_WARN_, note);
	}
	if (!ok)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_emit(lvl, line);
}
