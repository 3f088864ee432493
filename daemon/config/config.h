/* SPDX-License-Identifier: MIT */
/*
 * The daemon's configuration: one struct filled from built-in defaults,
 * then the file (--config, default /etc/cryptod/cryptod.conf), then the
 * command line. The file format is documented in docs/config.md and
 * cryptod.conf(5): "key = value" lines, '#' comments, nothing else.
 *
 * The parser is strict and pure (no side effects beyond user and group
 * name look-ups), so a libFuzzer target can drive it: unknown keys, bad
 * values and duplicate keys are errors reported as "file:line: message".
 * Applying a parsed config (config_apply_live) is a separate step.
 */
#ifndef CRYPTOD_CONFIG_H
#define CRYPTOD_CONFIG_H

#include <cryptod/compiler.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cryptod/ring_abi.h>

#include "log.h"

#define CONFIG_DEFAULT_PATH "/etc/cryptod/cryptod.conf"
#define CONFIG_KEY_DIR_DEFAULT "/var/lib/cryptod/keys"

enum config_bounds {
	CONFIG_FILE_MAX = 1 << 20, /* bytes: a bigger file is refused */
	CONFIG_LINE_MAX = 4096,	   /* bytes per line */
	CONFIG_ALLOW_MAX = 64,	   /* entries in allow_users / allow_groups */
	CONFIG_SOCKET_MAX = 108,   /* sun_path */
	CONFIG_PATH_MAX = 256,	   /* keys.dir, keys.kek */
	CONFIG_PCRYPT_ALGS_MAX = 512, /* bytes of kernel.pcrypt_algs */
	CONFIG_ERR_MAX = 512,	      /* an error message, file:line included */
};

/* Every key, in the order the documentation lists them. route.<alg> keys
 * are CK_ROUTE + alg. */
enum config_key {
	CK_SOCKET,
	CK_SOCKET_MODE,
	CK_SOCKET_GROUP,
	CK_WORKERS,
	CK_POLL_MODE,
	CK_SPIN_US,
	CK_PIN,
	CK_LOG_LEVEL,
	CK_ALLOW_USERS,
	CK_ALLOW_GROUPS,
	CK_LIM_CONNS,
	CK_LIM_QUEUES,
	CK_LIM_SESSIONS,
	CK_LIM_ARENA,
	CK_LIM_INFLIGHT,
	CK_LIM_UID_QUEUES,
	CK_LIM_UID_SESSIONS,
	CK_LIM_UID_ARENA,
	CK_KEY_MIN_BITS,
	CK_KEY_SESSIONLESS,
	CK_KEY_REQUIRE_MLOCK,
	CK_KEY_DIR,
	CK_KEY_KEK,
	CK_PCRYPT,
	CK_PCRYPT_ALGS,
	CK_ROUTE,
	CK_N = CK_ROUTE + CRD_ALG_MAX_,
};
/* config.set: a bit per key, as many words as the keys take (a route
 * per algorithm: the table grows them). */
enum { CONFIG_SET_WORDS = (CK_N + 63) / 64 };

enum config_pcrypt {
	CONFIG_PCRYPT_OFF,    /* never use pcrypt instances */
	CONFIG_PCRYPT_AUTO,   /* use instances that exist (kmod-shim) */
	CONFIG_PCRYPT_CREATE, /* create them (needs CAP_NET_ADMIN) */
};

/* Per-client bounds. A client is one connection; conns_per_uid counts a
 * user's connections. Hitting one is a defined error (docs/config.md). */
struct config_limits {
	unsigned conns_per_uid;
	unsigned queues;
	unsigned sessions;
	uint64_t arena_bytes;
	/* Ops the daemon may hold for one client, summed over its queues:
	 * an op is held from the moment a worker takes it off the submission
	 * ring until the client consumes its completion, so a queue holds at
	 * most its completion ring's entries. Enforced when a queue opens. */
	uint64_t inflight;
	/* The same summed over all connections of one uid (admins exempt),
	 * so one user cannot take the whole key store, queue table or
	 * memory from the others by opening many connections. */
	unsigned uid_queues;
	unsigned uid_sessions;
	uint64_t uid_arena_bytes;
};

struct config_key_policy {
	unsigned min_bits; /* shortest cipher key accepted (XTS: half) */
	int sessionless;   /* session-less ops allowed */
	int require_mlock; /* refuse to start if keys cannot be locked */
	/* Named keys (daemon/keys/namedkeys.h): where their files live ("" =
	 * $STATE_DIRECTORY/keys, else CONFIG_KEY_DIR_DEFAULT), and the
	 * key-encryption key: an absolute path of a root-only file or
	 * "credential:NAME" ($CREDENTIALS_DIRECTORY/NAME); "" = named keys
	 * off. */
	char dir[CONFIG_PATH_MAX];
	char kek[CONFIG_PATH_MAX];
};

struct config {
	char socket[CONFIG_SOCKET_MAX]; /* "" = $CRYPTOD_SOCKET or default */
	mode_t socket_mode;
	gid_t socket_group;
	int has_socket_group;
	unsigned workers; /* 0 = online CPUs */
	int busy_poll;
	unsigned spin_us;
	int pin;
	enum log_level log_level;
	uid_t allow_uids[CONFIG_ALLOW_MAX];
	unsigned n_allow_uids;
	gid_t allow_gids[CONFIG_ALLOW_MAX];
	unsigned n_allow_gids;
	struct config_limits lim;
	struct config_key_policy keys;
	/* route[alg]: engine name for sessions that name none; "" = none. */
	char route[CRD_ALG_MAX_][16];
	enum config_pcrypt pcrypt;
	char pcrypt_algs[CONFIG_PCRYPT_ALGS_MAX]; /* comma list, normalised */

	/* bit k: key k was given (config_is_set, config_mark_set) */
	uint64_t set[CONFIG_SET_WORDS];
	unsigned line[CK_N]; /* where key k was given (0: not a file) */
};

/* Was key k given (config_types.c, with the other per-key code)? */
int config_is_set(const struct config *c, unsigned k);
void config_mark_set(struct config *c, unsigned k, int on);

/* Built-in defaults (the values docs/config.md lists). */
void config_defaults(struct config *c);

/* For the parser: the key named name (CK_*, or CK_ROUTE + alg), or -1;
 * may "key =" stand with no value (both config_keys.c); parse value v
 * (modified) into key k of c, 0 or -1 with the reason in err
 * (config_types.c). */
int config_key_find(const char *name);
int config_key_empty_ok(unsigned k);
CRD_MUST_CHECK int config_store(struct config *c, unsigned k, char *v,
				char *err, size_t errlen);

/*
 * Parse text (len bytes, need not be NUL-terminated) into c, on top of
 * what c holds. name is the file name used in messages. Returns 0, or
 * -EINVAL with "name:line: message" in err.
 */
CRD_MUST_CHECK int config_parse(struct config *c, const char *text, size_t len,
				const char *name, char *err, size_t errlen);

/* Read and parse a file (at most CONFIG_FILE_MAX bytes). 0, or -errno
 * (-ENOENT missing, -EINVAL syntax) with the reason in err. */
CRD_MUST_CHECK int config_load(struct config *c, const char *path, char *err,
			       size_t errlen);

/*
 * Set one key from the command line ("--workers", "--set"): same value
 * syntax as the file; a later setting replaces an earlier one. 0 or
 * -EINVAL with "origin: message" in err.
 */
CRD_MUST_CHECK int config_set(struct config *c, const char *key,
			      const char *value, const char *origin, char *err,
			      size_t errlen);

/* Copy into dst every key src has set (command line over file). */
void config_merge(struct config *dst, const struct config *src);
/* Copy key k's value (and whether it was set) from src to dst. */
void config_copy_key(struct config *dst, const struct config *src, unsigned k);
/* Key k's value as the file would spell it (ids as numbers); "" for an
 * unset group or list. */
void config_value_str(const struct config *c, unsigned k, char *buf,
		      size_t len);

/* The key's name as the file spells it ("limits.sessions_per_client",
 * "route.aes-gcm"); NULL for an unknown index. */
const char *config_key_name(unsigned k);
/* Can key k change on SIGHUP? 1 yes, 0 needs a restart. */
int config_key_live(unsigned k);

/*
 * May a peer with these credentials connect? Admins (uid 0 or the
 * daemon's own uid) always may. With no allow list every peer that got
 * through the socket's permissions may; otherwise the uid must be listed
 * in allow_users or one of its groups (primary or supplementary) in
 * allow_groups. 1 or 0.
 */
int config_peer_allowed(const struct config *c, uid_t uid, gid_t gid,
			const gid_t *groups, unsigned n_groups);

/*
 * The active configuration (control thread), set by main at start-up and
 * on every successful reload. Readers must not keep the pointer across
 * a return to the event loop.
 */
const struct config *config_active(void);
void config_set_active(const struct config *c);

/*
 * Make the live parts of c take effect now: log level, limits, routing,
 * key policy (new sessions), allow lists (new connections). Logs each
 * route it could not apply. 0 or -errno (a route failed).
 */
int config_apply_live(const struct config *c);

/*
 * SIGHUP: take next (a freshly built configuration) over cur. Keys that
 * need a restart keep cur's value in next (logged as a warning), live
 * keys are logged and applied; next becomes the active configuration.
 * Returns how many settings changed.
 */
unsigned config_reload(const struct config *cur, struct config *next);

/* kernel.pcrypt and kernel.pcrypt_algs of the active configuration, for
 * the kernel engine's probe. The list is comma-separated kernel algorithm
 * names ("gcm(aes),authenc(hmac(sha256),cbc(aes))"), "" for none. */
enum config_pcrypt config_pcrypt_mode(void);
const char *config_pcrypt_algs(void);

#endif
