/* SPDX-License-Identifier: MIT */
/*
 * Logging to stderr, journal-friendly: when stderr is the journal
 * ($JOURNAL_STREAM set) every line starts with its syslog priority "<N>",
 * so journald keeps the level. Never pass key material to these.
 *
 * Every line is one line of printable ASCII, whatever its arguments hold:
 * the sink escapes each byte below 0x20, 0x7f and each byte from 0x80 up
 * (log_escape()), so a client's string (a key name, an engine name, a
 * path) can neither end the line and forge another, nor reach a terminal
 * as an escape sequence (ESC, or the C1 CSI 0x9b), nor put a "<N>"
 * priority at the start of a line for journald. Callers pass client
 * strings as they are. Lines are cut at LOG_LINE_MAX - 1 bytes before
 * escaping.
 */
#ifndef CRYPTOD_LOG_H
#define CRYPTOD_LOG_H

#include <cryptod/compiler.h>

#include <stddef.h>
#include <sys/types.h>

enum log_level { LOG_ERR_ = 3, LOG_WARN_ = 4, LOG_INFO_ = 6, LOG_DEBUG_ = 7 };

enum { LOG_LINE_MAX = 512 }; /* bytes of a formatted line, with its NUL */

/*
 * The log's escaping rule, for anything else that shows a client's
 * string (names in listings): copy src (NULL: "") into dst, cap bytes
 * with the NUL, as printable ASCII. "\n", "\r", "\t" for those bytes,
 * "\xNN" (lower-case hex) for every other byte below 0x20, 0x7f and
 * bytes from 0x80 up; everything else as it is, backslash included, so
 * escaping is idempotent: escaped text passes unchanged, and text that
 * already is clean is never altered. An escape that does not fit whole
 * is left out with everything after it. Returns the length of dst.
 */
size_t log_escape(char *dst, size_t cap, const char *src);

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
