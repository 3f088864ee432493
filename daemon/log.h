/* SPDX-License-Identifier: MIT */
/* Logging to stderr, journal-friendly: when stderr is the journal
 * ($JOURNAL_STREAM set) every line starts with its syslog priority "<N>",
 * so journald keeps the level. Never pass key material to these. */
#ifndef CRYPTOD_LOG_H
#define CRYPTOD_LOG_H

#include <cryptod/compiler.h>

#include <sys/types.h>

enum log_level { LOG_ERR_ = 3, LOG_WARN_ = 4, LOG_INFO_ = 6, LOG_DEBUG_ = 7 };

void log_init(enum log_level max);
/* Is stderr the journal stream named by $JOURNAL_STREAM? */
int log_stderr_is_journal(void);
/* Change the level (SIGHUP reload); any thread may log meanwhile. */
void log_set_level(enum log_level max);
CRD_MUST_CHECK int log_parse_level(const char *s, enum log_level *out);
const char *log_level_name(enum log_level lvl);
void log_msg(enum log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A line a client caused (connects, refusals, protocol errors): at most
 * LOG_RATE_BURST such lines per peer uid per LOG_RATE_WINDOW_S seconds,
 * so a hostile client cannot flood the journal; the next line after a
 * quiet spell says how many were dropped. Thread-safe.
 */
void log_peer(uid_t uid, enum log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_err(...) log_msg(LOG_ERR_, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN_, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO_, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG_, __VA_ARGS__)

#endif
