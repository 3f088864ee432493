/* SPDX-License-Identifier: MIT */
/* Logging to stderr, journal-friendly (<N> priority prefixes when stderr is
 * connected to the journal). Never pass key material to these. */
#ifndef CRYPTOD_LOG_H
#define CRYPTOD_LOG_H

enum log_level { LOG_ERR_ = 3, LOG_WARN_ = 4, LOG_INFO_ = 6, LOG_DEBUG_ = 7 };

void log_init(enum log_level max);
int log_parse_level(const char *s, enum log_level *out);
void log_msg(enum log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR_, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN_, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO_, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG_, __VA_ARGS__)

#endif
