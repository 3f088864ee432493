/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static enum log_level log_max = LOG_INFO_;
static int log_journal; /* stderr is the journal: prefix <N>, no time stamp */

void log_init(enum log_level max)
{
	log_max = max;
	log_journal = getenv("JOURNAL_STREAM") != NULL;
}

int log_parse_level(const char *s, enum log_level *out)
{
	static const struct {
		const char *name;
		enum log_level lvl;
	} names[] = { { "error", LOG_ERR_ },
		      { "warn", LOG_WARN_ },
		      { "info", LOG_INFO_ },
		      { "debug", LOG_DEBUG_ } };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcasecmp(s, names[i].name)) {
			*out = names[i].lvl;
			return 0;
		}
	}
	return -1;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *const tags[8] = {
		[3] = "error", [4] = "warn", [6] = "info", [7] = "debug"
	};
	if (lvl > log_max)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_journal)
		fprintf(stderr, "<%d>%s\n", (int)lvl, line);
	else
		fprintf(stderr, "cryptod[%s]: %s\n", tags[lvl], line);
}
