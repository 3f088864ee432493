/* SPDX-License-Identifier: MIT */
#include "keyreq.h"
#include "keystore.h"
#include "keywrap.h"
#include "log.h"
#include "namedkeys.h"
#include "pkeys.h"
#include "reply.h"
#include "names.h"

#include <cryptod/ring_abi.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

static int enabled;
static void gen_stop(void);

int keyreq_enabled(void)
{
	return enabled;
}

/* The KEK's file: a credential is the service user's (systemd makes it
 * root's, readable through an ACL), a plain file root's or the daemon's
 * own user's (the unit runs as User=cryptod, which cannot read a file
 * only root may). */
static int kek_path(const char *src, char *path, size_t len, uid_t *owner)
{
	if (strncmp(src, "credential:", 11)) {
		snprintf(path, len, "%s", src);
		*owner = geteuid();
		return 0;
	}
	const char *cd = getenv("CREDENTIALS_DIRECTORY");
	if (!cd || !*cd) {
		log_err("keys.kek = %s: $CREDENTIALS_DIRECTORY is not set "
			"(LoadCredential= or LoadCredentialEncrypted= in the "
			"unit provides it)",
			src);
		return -ENOENT;
	}
	snprintf(path, len, "%s/%s", cd, src + 11);
	*owner = geteuid();
	return 0;
}

static void key_dir(const struct config *cfg, char *dir, size_t len)
{
	const char *sd = getenv("STATE_DIRECTORY");

	if (cfg->keys.dir[0])
		snprintf(dir, len, "%s", cfg->keys.dir);
	else if (sd && *sd) /* a list when the unit names several: the first */
		snprintf(dir, len, "%.*s/keys", (int)strcspn(sd, ":"), sd);
	else
		snprintf(dir, len, "%s", CONFIG_KEY_DIR_DEFAULT);
}

int keyreq_start(const struct config *cfg)
{
	char path[CONFIG_PATH_MAX + 128], dir[CONFIG_PATH_MAX + 8], why[200];
	uid_t owner;

	if (!cfg->keys.kek[0]) {
		log_info("named keys: off (keys.kek is not set)");
		return 0;
	}
	const char *src = cfg->keys.kek;
	int keyring = !strncmp(src, "keyring:", 8);
	int err = keyring ? 0 : kek_path(src, path, sizeof(path), &owner);
	if (err)
		return err;
	uint8_t *kek = ks_map(KF_KEK_LEN);
	if (!kek)
		return -ENOMEM;
	if (keyring) {
		snprintf(path, sizeof(path), "%s", src);
		err = kf_kek_keyring(src + 8, kek, why, sizeof(why));
	} else {
		err = kf_kek_read(path, owner, !strncmp(src, "credential:", 11),
				  kek, why, sizeof(why));
	}
	if (err) {
		log_err("keys.kek: %s: %s", path, why);
		goto out;
	}
	key_dir(cfg, dir, sizeof(dir));
	int n = nk_init(dir, kek);
	if (n < 0) {
		err = n;
		log_err("keys.dir: %s: %s", dir, strerror(-n));
		goto out;
	}
	enabled = 1;
	log_info("named keys: %d loaded from %s", n, dir);
	err = 0;
out:
	ks_unmap(kek, KF_KEK_LEN);
	return err;
}

void keyreq_stop(void)
{
	gen_stop();
	nk_fini();
	enabled = 0;
}

/* The peer's supplementary groups (SO_PEERGROUPS), at most max; the
 * count (0 when the kernel will not say). */
static unsigned peer_groups(int fd, gid_t *groups, unsigned max)
{
	socklen_t len = (socklen_t)(max * sizeof(gid_t));

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return 0;
	return (unsigned)(len / sizeof(gid_t));
}

enum { KR_GROUPS_MAX = 256 };

static int may_use(struct client *c, const char *name)
{
	gid_t g[KR_GROUPS_MAX];
	unsigned n = peer_groups(c->fd, g, KR_GROUPS_MAX);

	return nk_allowed(name, c->uid, c->gid, g, n);
}

static int send_error(struct client *c, uint32_t seq, int code, const char *msg)
{
	return reply_error(c->fd, seq, code, msg);
}

static const char *errmsg(int err)
{
	switch (err) {
	case -ENOENT:
		return "no such key or version";
	case -EEXIST:
		return "a key of that name exists";
	case -EINVAL:
		return "bad name (letters, digits, . _ -; at most 64), "
		       "algorithm (one with a single key), key length, "
		       "usage or ACL";
	case -ENOSPC:
		return "the registry is full";
	case -EPERM:
		return "the key is not exportable";
	case -EBADMSG:
		return "not a key wrapped (RFC 5649) under that wrapping key";
	case -ENODEV:
		return "named keys are off (keys.kek is not set)";
	case -EBUSY:
		return "another key pair is being generated: try again in a "
		       "moment";
	default:
		return strerror(-err);
	}
}

/* KeyInfo views over nk_info structs: the arrays stay in *in. */
static void info_view(struct nk_info *in, Cryptod__KeyInfo *ki)
{
	cryptod__key_info__init(ki);
	ki->name = in->name;
	ki->alg = in->alg;
	/* A key pair's stored length is its slot's, no fact about the key:
	 * its algorithm says its type and size. */
	ki->key_len = crd_alg_pkey(in->alg) ? 0 : in->key_len;
	ki->usage = in->usage;
	ki->exportable = in->exportable;
	ki->n_uids = in->nuids;
	ki->uids = in->uids;
	ki->n_gids = in->ngids;
	ki->gids = in->gids;
	ki->n_versions = in->nversions;
	ki->versions = in->versions;
	ki->n_created = in->nversions;
	ki->created = in->created;
	ki->ops = in->ops;
	ki->bytes = in->bytes;
	ki->last_use = in->last_use;
}

static int send_reply(struct client *c, uint32_t seq, Cryptod__KeyReply *r)
{
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_KEY_REPLY;
	env.key_reply = r;
	int err = wire_send(c->fd, &env, NULL, 0);
	if (err == -EMSGSIZE)
		return send_error(c, seq, err,
				  "reply too large for one message: show "
				  "the keys one by one");
	return err;
}

/* One key's facts: create, import, unwrap, rotate, show. */
static int reply_one(struct client *c, uint32_t seq, const char *name,
		     uint32_t version)
{
	struct nk_info in;
	Cryptod__KeyInfo ki, *kp = &ki;
	Cryptod__KeyReply r = CRYPTOD__KEY_REPLY__INIT;

	if (nk_info(name, &in))
		return send_error(c, seq, -ENOENT, errmsg(-ENOENT));
	info_view(&in, &ki);
	r.n_keys = 1;
	r.keys = &kp;
	r.version = version;
	return send_reply(c, seq, &r);
}

static int reply_list(struct client *c, uint32_t seq)
{
	int admin = client_is_admin(c);
	unsigned n = 0;
	struct nk_info *in = calloc(NK_MAX_KEYS, sizeof(*in));
	Cryptod__KeyInfo *ki = calloc(NK_MAX_KEYS, sizeof(*ki));
	Cryptod__KeyInfo **kp = calloc(NK_MAX_KEYS, sizeof(*kp));
	Cryptod__KeyReply r = CRYPTOD__KEY_REPLY__INIT;
	int err;

	if (!in || !ki || !kp) {
		err = send_error(c, seq, -ENOMEM, "out of memory");
		goto out;
	}
	for (unsigned i = 0; nk_name_at(i); i++) {
		const char *name = nk_name_at(i);
		if (!admin && !may_use(c, name))
			continue;
		if (nk_info(name, &in[n]))
			continue;
		info_view(&in[n], &ki[n]);
		kp[n] = &ki[n];
		n++;
	}
	r.n_keys = n;
	r.keys = kp;
	err = send_reply(c, seq, &r);
out:
	free(kp);
	free(ki);
	free(in);
	return err;
}

/* Would a session take a key of len bytes for alg? A trial session on a
 * stand-in key (distinct XTS halves), destroyed at once. 0, -EINVAL,
 * CRD_ST_POLICY (the engines' lengths, then keys.min_bits). */
static int key_len_check(unsigned alg, size_t len)
{
	uint8_t dummy[KF_KEY_MAX];
	struct session *t;

	if (!len || len > KF_KEY_MAX || !alg || alg >= CRD_ALG_MAX_)
		return -EINVAL;
	for (unsigned i = 0; i < len; i++)
		dummy[i] = (uint8_t)(i + 1);
	struct session_params p = { .alg = alg, .key = dummy, .key_len = len };
	int err = session_create(&p, &t);
	if (!err)
		session_destroy(t);
	return err == -EPERM ? CRD_ST_POLICY : err == -ENOSPC ? 0 : err;
}

/*
 * Usage rules that would not hold, from the algorithm table: the bits
 * must be of the algorithm's usage class (its use column: encrypt and
 * decrypt for ciphers and AEADs, mac-generate and mac-verify for MACs),
 * and where the cipher is a keystream under a client IV
 * (crd_alg_keystream) the directions cannot be split at will. A counter-mode cipher encrypts and decrypts with the
 * same keystream, so either direction alone gives the other; a
 * counter-mode AEAD allowed to encrypt with client IVs yields the
 * keystream of any captured ciphertext, so encrypt without decrypt
 * protects nothing (decrypt alone is sound: it releases nothing
 * unauthenticated, one-shot ops only: streams.c). NULL, or why not.
 */
static const char *usage_unsound(uint16_t alg, uint32_t usage)
{
	if (crd_alg_pkey(alg)) {
		uint32_t ok = pk_usage_allowed(alg);
		if (usage && !(usage & ~ok))
			return NULL;
		if (!(ok & ~KF_USE_DERIVE))
			return "an X25519 or X448 key's usage is derive "
			       "(it neither signs nor encrypts)";
		if (!(ok & ~(KF_USE_SIGN | KF_USE_VERIFY)))
			return "an EdDSA key's usage is sign, verify or both "
			       "(it neither derives nor encrypts)";
		if (ok & KF_USE_DERIVE)
			return "an EC key's usage is sign, verify, derive or "
			       "some of them (not encrypt or decrypt)";
		return "an RSA key's usage is sign, verify, encrypt, decrypt "
		       "or some of them (not derive)";
	}
	enum crd_alg_kind kind = crd_alg_kind(alg);
	int mac = crd_alg_use(alg) == CRD_USE_MAC;
	uint32_t kinds = mac ? KF_USE_MAC_GENERATE | KF_USE_MAC_VERIFY
			     : KF_USE_ENCRYPT | KF_USE_DECRYPT;
	int enc = !!(usage & KF_USE_ENCRYPT), dec = !!(usage & KF_USE_DECRYPT);

	if (!usage || usage & ~kinds)
		return mac ? "a MAC key's usage is mac-generate, mac-verify "
			     "or both (not encrypt, decrypt or a key pair's "
			     "sign, verify, derive)"
			   : "a cipher or AEAD key's usage is encrypt, decrypt "
			     "or both (not mac-generate, mac-verify or a key "
			     "pair's sign, verify, derive)";
	if (!crd_alg_keystream(alg))
		return NULL;
	if (kind == CRD_KIND_CIPHER && enc != dec)
		return "encrypt and decrypt are one operation for a "
		       "counter-mode cipher: give both or neither";
	if (kind == CRD_KIND_AEAD && enc && !dec)
		return "encrypt without decrypt protects nothing for a "
		       "counter-mode AEAD (client IVs yield any ciphertext's "
		       "keystream): allow decrypt too, or decrypt alone";
	return NULL;
}

/*
 * The one set of checks for a key that enters the registry, whichever
 * way it comes: create (random bytes), import (bytes given), unwrap
 * (bytes unwrapped) and rotate (a new version). A name the registry
 * takes, an algorithm with a single key, usage rules that hold
 * (usage_unsound), the length the request asked for (asked; 0: the
 * key's own, for import and unwrap), and a length the engines take for
 * the algorithm under the key policy (key_len_check; a key pair's DER
 * was made or checked against its row by pkeys.c instead, and len is
 * not asked for). Keys loaded from
 * the key directory are not checked again: a stricter keys.min_bits
 * must not drop keys at start; sessions on them are refused instead.
 * 0, -EINVAL or CRD_ST_POLICY, with the reason in why.
 */
static int key_check(const struct nk_spec *s, uint32_t asked, size_t len,
		     char *why, size_t wlen)
{
	const char *name = crd_alg_name(s->alg) ? crd_alg_name(s->alg) : "?";
	const char *unsound;

	if (!s->name || !kf_name_ok(s->name)) {
		snprintf(why, wlen,
			 "bad name: letters, digits, '.', '_' and '-', "
			 "at most %d, beginning with a letter or digit",
			 KF_NAME_MAX);
		return -EINVAL;
	}
	if (!nk_alg_ok(s->alg)) {
		snprintf(why, wlen, "%s %s", name,
			 s->alg && s->alg < CRD_ALG_MAX_
				 ? crd_alg_no_named_key(s->alg)
				 : "is no algorithm cryptod knows");
		return -EINVAL;
	}
	unsound = usage_unsound(s->alg, s->usage);
	if (unsound) {
		snprintf(why, wlen, "%s: %s", name, unsound);
		return -EINVAL;
	}
	if (crd_alg_pkey(s->alg))
		return 0;
	if (asked && asked != len) {
		snprintf(why, wlen, "the key is %zu bytes; the request says %u",
			 len, (unsigned)asked);
		return -EINVAL;
	}
	int err = key_len_check(s->alg, len);
	if (err == CRD_ST_POLICY)
		snprintf(why, wlen,
			 "a %zu-byte %s key is shorter than the daemon's key "
			 "policy allows (keys.min_bits)",
			 len, name);
	else if (err)
		snprintf(why, wlen,
			 "no engine takes a %zu-byte key for %s ('cryptoctl "
			 "engines' lists the key sizes)",
			 len, name);
	return err;
}

static struct nk_spec spec_of(const Cryptod__KeyRequest *m)
{
	struct nk_spec s = {
		.name = m->name,
		.alg = (uint16_t)(m->alg > UINT16_MAX ? 0 : m->alg),
		.key_len = (uint16_t)(m->key_len > UINT16_MAX ? 0 : m->key_len),
		.usage = m->usage,
		.exportable = m->exportable,
		.nuids = (uint8_t)(m->n_uids > KF_MAX_IDS ? 255 : m->n_uids),
		.ngids = (uint8_t)(m->n_gids > KF_MAX_IDS ? 255 : m->n_gids),
		.uids = m->uids,
		.gids = m->gids,
	};
	return s;
}

/* KEY_UNWRAP's bytes, into ks_map() memory (*out, KW_MAX_INPUT bytes,
 * the caller's to ks_unmap): their length, or -errno with why. */
static int unwrap(const Cryptod__KeyRequest *m, uint8_t **out, char *why,
		  size_t wlen)
{
	size_t kl = m->wrapping_key.len;

	*out = NULL;
	if (kl != 16 && kl != 24 && kl != 32) {
		snprintf(why, wlen,
			 "the wrapping key must be 16, 24 or 32 "
			 "bytes");
		return -EINVAL;
	}
	if (m->wrapped.len > KF_PKEY_MAX + 16) {
		snprintf(why, wlen, "longer than the wrap of any key");
		return -EINVAL;
	}
	*out = ks_map(KW_MAX_INPUT);
	if (!*out)
		return -ENOMEM;
	return kwp_unwrap(m->wrapping_key.data, kl, m->wrapped.data,
			  m->wrapped.len, *out, KW_MAX_INPUT);
}

/*
 * Key pairs are generated off the control thread: RSA-4096 takes seconds,
 * and every client's control requests would wait that long. One job at
 * a time (another create or rotate meanwhile gets -EBUSY): a thread makes
 * the DER into locked memory and writes a byte to a pipe, on which the
 * control loop finishes the request (the registry, the reply) in
 * gen_done(). The thread touches only gen.s.alg, gen.s.key_len, gen.der,
 * gen.n and gen.why; pthread_join() orders its writes before the
 * control thread's reads.
 */
static struct {
	int busy; /* a job is out; the fields below are its */
	pthread_t thr;
	int fds[2]; /* the pipe: the thread writes, the control loop reads */
	uint32_t client, seq;
	uid_t uid;
	int rotate;
	char name[KF_NAME_MAX + 1];
	struct nk_spec s; /* s.name = name, s.uids = uids, s.gids = gids */
	uint32_t uids[KF_MAX_IDS], gids[KF_MAX_IDS];
	uint8_t *der; /* KF_PKEY_MAX bytes, ks_map()ped */
	int n;	      /* pk_generate()'s answer */
	char why[200];
} gen = { .fds = { -1, -1 } };

static void *gen_run(void *arg)
{
	char b = 1;

	(void)arg;
	gen.n = pk_generate(gen.s.alg, gen.der, gen.s.key_len, gen.why,
			    sizeof(gen.why));
	while (write(gen.fds[1], &b, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static struct client *client_by_id(uint32_t id)
{
	for (struct client *c = client_first(); c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

/* The job is done: into the registry, then the answer, if the client
 * is still there (if not, the change stands, like any request whose
 * reply was lost). */
static void gen_done(evutil_socket_t fd, short what, void *arg)
{
	char b;

	(void)what;
	(void)arg;
	while (read(fd, &b, 1) < 0 && errno == EINTR)
		;
	pthread_join(gen.thr, NULL);
	int err = gen.n < 0 ? gen.n : 0, ver = 1;
	if (!err && gen.rotate)
		err = ver = nk_rotate_to(gen.name, gen.der, (size_t)gen.n);
	else if (!err)
		err = nk_import(&gen.s, gen.der, (size_t)gen.n);
	ks_unmap(gen.der, KF_PKEY_MAX);
	gen.der = NULL;
	gen.busy = 0;
	if (err >= 0)
		log_info("keys: %s (%s) %s by uid %u", gen.name,
			 crd_alg_name(gen.s.alg),
			 gen.rotate ? "rotated to a new pair" : "created",
			 (unsigned)gen.uid);
	struct client *c = client_by_id(gen.client);
	if (!c)
		return;
	/* A send that fails closes nothing here: the client's next read
	 * does. */
	if (err < 0)
		(void)send_error(c, gen.seq, err,
				 gen.why[0] ? gen.why : errmsg(err));
	else
		(void)reply_one(c, gen.seq, gen.name, (uint32_t)ver);
}

/* Hand a pair's generation for s (create) or for the key name (rotate)
 * to the thread: 0 (gen_done() answers) or -errno. */
static int gen_start(struct client *c, uint32_t seq, const struct nk_spec *s,
		     int rotate)
{
	sigset_t all, old;

	if (gen.busy)
		return -EBUSY;
	if (s->nuids > KF_MAX_IDS || s->ngids > KF_MAX_IDS ||
	    (s->nuids && !s->uids) || (s->ngids && !s->gids))
		return -EINVAL;
	if (gen.fds[0] < 0 && pipe2(gen.fds, O_CLOEXEC) < 0)
		return -errno;
	gen.der = ks_map(KF_PKEY_MAX);
	if (!gen.der)
		return -ENOMEM;
	gen.s = *s;
	snprintf(gen.name, sizeof(gen.name), "%s", s->name);
	gen.s.name = gen.name;
	if (s->nuids)
		memcpy(gen.uids, s->uids, sizeof(uint32_t) * s->nuids);
	if (s->ngids)
		memcpy(gen.gids, s->gids, sizeof(uint32_t) * s->ngids);
	gen.s.uids = gen.uids;
	gen.s.gids = gen.gids;
	gen.client = c->id;
	gen.seq = seq;
	gen.uid = c->uid;
	gen.rotate = rotate;
	gen.why[0] = '\0';
	/* The thread takes no signals: the daemon's are the loop's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&gen.thr, NULL, gen_run, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		ks_unmap(gen.der, KF_PKEY_MAX);
		gen.der = NULL;
		return -err;
	}
	gen.busy = 1;
	/* Freed with the base if the daemon stops first (keyreq_stop()
	 * joins the thread). Without it, finish here, waiting. */
	if (event_base_once(event_get_base(c->ev), gen.fds[0], EV_READ,
			    gen_done, NULL, NULL))
		gen_done(gen.fds[0], EV_READ, NULL);
	return 0;
}

static void gen_stop(void)
{
	if (gen.busy)
		pthread_join(gen.thr, NULL);
	gen.busy = 0;
	ks_unmap(gen.der, KF_PKEY_MAX);
	gen.der = NULL;
	for (int i = 0; i < 2; i++) {
		if (gen.fds[i] >= 0)
			close(gen.fds[i]);
		gen.fds[i] = -1;
	}
}

static const char *enter_verb(const Cryptod__KeyRequest *m)
{
	return m->op == CRYPTOD__KEY_OP__KEY_CREATE   ? "created"
	       : m->op == CRYPTOD__KEY_OP__KEY_IMPORT ? "imported"
						      : "unwrapped";
}

/*
 * A key pair's create, import or unwrap: its PKCS#8 DER made from the
 * row (pk_generate) or decoded and checked against it (pk_import, the
 * row found from the key when the request names none), the default
 * usage all the row allows, key_check(), then the registry. The DER
 * lives only in locked memory, wiped on every path; the request's key
 * and passphrase are wiped with the message (wire.c's allocator).
 */
static int pkey_enter(struct client *c, uint32_t seq,
		      const Cryptod__KeyRequest *m)
{
	struct nk_spec s = spec_of(m);
	char why[200] = "";
	uint8_t *unwrapped = NULL;
	uint8_t *der = ks_map(KF_PKEY_MAX);
	int n;

	if (!der)
		return send_error(c, seq, -ENOMEM, "out of locked memory");
	if (m->op == CRYPTOD__KEY_OP__KEY_CREATE) {
		/* Every check that needs no key now, the pair in gen_run() */
		struct nk_info in;
		int err = 0;
		ks_unmap(der, KF_PKEY_MAX);
		if (!s.usage)
			s.usage = pk_usage_allowed(s.alg);
		s.key_len = (uint16_t)kf_pk_slot_len(s.alg);
		if (s.name && !nk_info(s.name, &in))
			err = -EEXIST;
		if (!err)
			err = key_check(&s, 0, 0, why, sizeof(why));
		if (!err)
			err = gen_start(c, seq, &s, 0);
		return err ? send_error(c, seq, err, why[0] ? why : errmsg(err))
			   : 0;
	}
	if (m->op == CRYPTOD__KEY_OP__KEY_IMPORT) {
		n = pk_import(m->key.data, m->key.len, m->passphrase.data,
			      m->passphrase.len, &s.alg, der, KF_PKEY_MAX, why,
			      sizeof(why));
	} else {
		n = unwrap(m, &unwrapped, why, sizeof(why));
		if (n > 0)
			n = pk_import(unwrapped, (size_t)n, NULL, 0, &s.alg,
				      der, KF_PKEY_MAX, why, sizeof(why));
		else if (n == -EBADMSG)
			why[0] = '\0'; /* errmsg() says it */
	}
	if (unwrapped)
		ks_unmap(unwrapped, KW_MAX_INPUT);
	int err = n < 0 ? n : 0;
	if (!err && !s.usage)
		s.usage = pk_usage_allowed(s.alg);
	if (!err)
		err = key_check(&s, 0, (size_t)n, why, sizeof(why));
	if (!err) {
		s.key_len = (uint16_t)kf_pk_slot_len(s.alg);
		err = nk_import(&s, der, (size_t)n);
	}
	ks_unmap(der, KF_PKEY_MAX);
	if (err)
		return send_error(c, seq, err, why[0] ? why : errmsg(err));
	log_info("keys: %s (%s) %s by uid %u", s.name, crd_alg_name(s.alg),
		 enter_verb(m), (unsigned)c->uid);
	return reply_one(c, seq, s.name, 1);
}

/*
 * Create, import, unwrap: the key's bytes (none yet for create: the
 * registry draws them), key_check(), then the registry. Unwrapped bytes
 * live only in locked memory, wiped on every path. A key pair's
 * algorithm, or an import or unwrap naming none (the key says), is
 * pkey_enter()'s.
 */
static int key_enter(struct client *c, uint32_t seq,
		     const Cryptod__KeyRequest *m)
{
	struct nk_spec s = spec_of(m);
	char why[200] = "";
	uint8_t *unwrapped = NULL;
	const uint8_t *key = NULL;
	size_t len = m->key_len;
	int err = 0;

	if (crd_alg_pkey(s.alg) ||
	    (!m->alg && m->op != CRYPTOD__KEY_OP__KEY_CREATE))
		return pkey_enter(c, seq, m);
	if (m->op == CRYPTOD__KEY_OP__KEY_IMPORT) {
		key = m->key.data;
		len = m->key.len;
	} else if (m->op == CRYPTOD__KEY_OP__KEY_UNWRAP) {
		err = unwrap(m, &unwrapped, why, sizeof(why));
		key = unwrapped;
		len = err > 0 ? (size_t)err : 0;
		err = err > 0 ? 0 : err;
	}
	if (!err)
		err = key_check(&s, m->key_len, len, why, sizeof(why));
	if (!err) {
		s.key_len = (uint16_t)len;
		err = key ? nk_import(&s, key, len) : nk_create(&s);
	}
	if (unwrapped)
		ks_unmap(unwrapped, KW_MAX_INPUT);
	if (err)
		return send_error(c, seq, err, why[0] ? why : errmsg(err));
	log_info("keys: %s %s by uid %u", s.name, enter_verb(m),
		 (unsigned)c->uid);
	return reply_one(c, seq, s.name, 1);
}

/* A new version: the key as it is meets today's checks (the key policy
 * may have grown stricter since it was made); a key pair's is a new
 * pair made from its row. */
static int key_rotate(struct client *c, uint32_t seq, const char *name)
{
	struct nk_info in;
	char why[200] = "";

	int err = nk_info(name, &in);
	if (!err) {
		struct nk_spec s = { .name = in.name,
				     .alg = in.alg,
				     .key_len = in.key_len,
				     .usage = in.usage };
		err = key_check(&s, in.key_len, in.key_len, why, sizeof(why));
	}
	if (!err && crd_alg_pkey(in.alg)) {
		struct nk_spec s = { .name = in.name,
				     .alg = in.alg,
				     .key_len = in.key_len,
				     .usage = in.usage };
		err = gen_start(c, seq, &s, 1); /* gen_done() answers */
		if (!err)
			return 0;
	} else if (!err) {
		err = nk_rotate(name);
	}
	if (err < 0)
		return send_error(c, seq, err, why[0] ? why : errmsg(err));
	log_info("keys: %s rotated to version %d by uid %u", name, err,
		 (unsigned)c->uid);
	return reply_one(c, seq, name, (uint32_t)err);
}

/* A key pair's public half: not secret, but whether the key exists is,
 * so only for those who may use it (keyreq_handle checks). */
static int key_pub(struct client *c, uint32_t seq, const char *name,
		   uint32_t version)
{
	uint8_t spki[KF_PKEY_MAX];
	Cryptod__KeyReply r = CRYPTOD__KEY_REPLY__INIT;

	int n = nk_pub(name, version, spki, sizeof(spki));
	if (n < 0)
		return send_error(c, seq, n,
				  n == -EINVAL ? "the key is no key pair: it "
						 "has no public half"
					       : errmsg(n));
	r.public_key.data = spki;
	r.public_key.len = (size_t)n;
	return send_reply(c, seq, &r);
}

int keyreq_handle(struct client *c, uint32_t seq, const Cryptod__KeyRequest *m)
{
	const char *name = m->name ? m->name : "";
	int admin = client_is_admin(c);

	if (!enabled)
		return send_error(c, seq, -ENODEV, errmsg(-ENODEV));
	switch (m->op) {
	case CRYPTOD__KEY_OP__KEY_LIST:
		return reply_list(c, seq);
	case CRYPTOD__KEY_OP__KEY_PUB:
		if (!admin && !may_use(c, name))
			return send_error(c, seq, CRD_ST_ACCESS,
					  "no key of that name that you may "
					  "use");
		return key_pub(c, seq, name, m->version);
	case CRYPTOD__KEY_OP__KEY_SHOW:
		if (!admin && !may_use(c, name))
			return send_error(c, seq, CRD_ST_ACCESS,
					  "no key of that name that you may "
					  "use");
		return reply_one(c, seq, name, 0);
	case CRYPTOD__KEY_OP__KEY_CREATE:
	case CRYPTOD__KEY_OP__KEY_IMPORT:
	case CRYPTOD__KEY_OP__KEY_UNWRAP:
	case CRYPTOD__KEY_OP__KEY_ROTATE:
	case CRYPTOD__KEY_OP__KEY_WRAP:
	case CRYPTOD__KEY_OP__KEY_DELETE:
		break;
	default:
		return send_error(c, seq, -EOPNOTSUPP, "unknown key operation");
	}
	if (!admin) {
		log_peer(c->uid, LOG_WARN_,
			 "client %u: uid %u may not manage named keys", c->id,
			 (unsigned)c->uid);
		return send_error(c, seq, CRD_ST_ACCESS,
				  "managing named keys needs an administrator "
				  "(root or the daemon's user)");
	}

	switch (m->op) {
	case CRYPTOD__KEY_OP__KEY_CREATE:
	case CRYPTOD__KEY_OP__KEY_IMPORT:
	case CRYPTOD__KEY_OP__KEY_UNWRAP:
		return key_enter(c, seq, m);
	case CRYPTOD__KEY_OP__KEY_ROTATE:
		return key_rotate(c, seq, name);
	case CRYPTOD__KEY_OP__KEY_WRAP: {
		uint8_t blob[KF_PKEY_MAX + 16];
		Cryptod__KeyReply r = CRYPTOD__KEY_REPLY__INIT;
		int n = nk_wrap(name, m->version, m->wrapping_key.data,
				m->wrapping_key.len, blob, sizeof(blob));
		if (n < 0)
			return send_error(c, seq, n,
					  n == -EINVAL
						  ? "the wrapping key must "
						    "be 16, 24 or 32 bytes"
						  : errmsg(n));
		log_info("keys: %s exported (wrapped) by uid %u", name,
			 (unsigned)c->uid);
		r.wrapped.data = blob;
		r.wrapped.len = (size_t)n;
		return send_reply(c, seq, &r);
	}
	case CRYPTOD__KEY_OP__KEY_DELETE: {
		Cryptod__KeyReply r = CRYPTOD__KEY_REPLY__INIT;
		int err = nk_delete(name);
		if (err)
			return send_error(c, seq, err, errmsg(err));
		log_info("keys: %s deleted by uid %u", name, (unsigned)c->uid);
		return send_reply(c, seq, &r);
	}
	default:
		return send_error(c, seq, -EOPNOTSUPP, "unknown key operation");
	}
}

int keyreq_session(struct client *c, const Cryptod__CreateSession *m,
		   struct session **out, uint32_t *version, char *msg,
		   size_t msglen)
{
	struct nk_info in;
	gid_t g[KR_GROUPS_MAX];
	unsigned ng = peer_groups(c->fd, g, KR_GROUPS_MAX);
	int admin = client_is_admin(c);
	int err;

	if (!enabled) {
		snprintf(msg, msglen, "%s", errmsg(-ENODEV));
		return -ENODEV;
	}
	if (m->key.len || m->auth_key.len) {
		snprintf(msg, msglen, "a named key or key bytes, not both");
		return -EINVAL;
	}
	err = nk_info(m->key_name, &in);
	if (!err && !nk_allowed(m->key_name, c->uid, c->gid, g, ng))
		err = -EACCES;
	if (err == -EACCES || (err == -ENOENT && !admin)) {
		log_peer(c->uid, LOG_WARN_,
			 "client %u: uid %u refused named key '%.64s'", c->id,
			 (unsigned)c->uid, m->key_name);
		snprintf(msg, msglen, "no key of that name that you may use");
		return CRD_ST_ACCESS;
	}
	if (err) {
		snprintf(msg, msglen, "%s", errmsg(err));
		return err;
	}
	if (m->alg && m->alg != in.alg) {
		snprintf(msg, msglen, "the key is for %s",
			 crd_alg_name(in.alg) ? crd_alg_name(in.alg) : "?");
		return -EINVAL;
	}
	/* The directions the key's usage allows for its algorithm: encrypt
	 * or generate, decrypt or verify; a key pair's ops as its usage
	 * names them. */
	int mac = crd_alg_use(in.alg) == CRD_USE_MAC;
	int pkey = crd_alg_pkey(in.alg);
	uint32_t enc = mac ? KF_USE_MAC_GENERATE : KF_USE_ENCRYPT;
	uint32_t dec = mac ? KF_USE_MAC_VERIFY : KF_USE_DECRYPT;
	uint32_t want =
		in.usage & (pkey ? pk_usage_allowed(in.alg) : enc | dec);
	unsigned op_mask = kf_usage_ops(want);

	uint8_t *key = ks_map(KF_PKEY_MAX);
	if (!key)
		return -ENOMEM;
	uint16_t key_len, alg;
	struct nk_key *ref;
	err = nk_open(m->key_name, m->key_version, c->uid, c->gid, g, ng, want,
		      key, &key_len, &alg, version, &ref);
	if (err) {
		ks_unmap(key, KF_PKEY_MAX);
		if (err == -EPERM) {
			log_peer(c->uid, LOG_WARN_,
				 "client %u: named key '%.64s' allows no use "
				 "for %s",
				 c->id, m->key_name, crd_alg_name(in.alg));
			snprintf(msg, msglen,
				 "the key's usage rules allow no operation "
				 "of its algorithm");
			return CRD_ST_POLICY;
		}
		snprintf(msg, msglen, "%s", errmsg(err));
		return err;
	}
	/* A key that may verify but not generate keeps its whole tag: with
	 * a shorter one a client could find the tag a few bytes at a time
	 * (2^32 tries for 4 bytes, then 256 per byte) and so generate. */
	unsigned full = crd_alg_tag_len(alg);
	if (!pkey && (want & dec) && !(want & enc) && m->tag_len &&
	    m->tag_len != full) {
		ks_unmap(key, KF_PKEY_MAX);
		nk_close(ref);
		snprintf(msg, msglen,
			 "a key that may only verify or decrypt takes its "
			 "whole %u-byte tag",
			 full);
		return CRD_ST_POLICY;
	}
	struct session_params p = {
		.alg = alg,
		.key = key,
		.key_len = key_len,
		.tag_len = m->tag_len,
		.engine = m->engine,
		.op_mask = op_mask,
	};
	err = session_create(&p, out);
	ks_unmap(key, KF_PKEY_MAX);
	if (err) {
		nk_close(ref);
		snprintf(msg, msglen, "cannot create a session on this key: %s",
			 err == -EPERM ? "shorter than keys.min_bits"
				       : strerror(-err));
		return err == -EPERM ? CRD_ST_POLICY : err;
	}
	(*out)->named = ref;
	return 0;
}
