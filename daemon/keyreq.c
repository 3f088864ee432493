/* SPDX-License-Identifier: MIT */
#include "keyreq.h"
#include "keystore.h"
#include "log.h"
#include "namedkeys.h"
#include "names.h"

#include <cryptod/ring_abi.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int enabled;

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
	Cryptod__Error e = CRYPTOD__ERROR__INIT;
	e.code = code;
	e.message = (char *)msg;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_ERROR;
	env.error = &e;
	return wire_send(c->fd, &env, NULL, 0);
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
	ki->key_len = in->key_len;
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
 * CRD_ST_POLICY. */
static int key_len_check(unsigned alg, unsigned len)
{
	uint8_t dummy[KF_KEY_MAX];
	struct session *t;

	if (len > KF_KEY_MAX || !alg || alg >= CRD_ALG_MAX_)
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
 * Usage rules that would not hold. A counter-mode cipher (CTR, ChaCha20,
 * the 3GPP ciphers) encrypts and decrypts with the same keystream under
 * an IV the client chooses, so either direction alone gives the other; a
 * counter-mode AEAD allowed to encrypt with client IVs yields the
 * keystream of any captured ciphertext, so encrypt without decrypt
 * protects nothing (decrypt alone is sound: it releases nothing
 * unauthenticated). NULL, or why not.
 */
static const char *usage_unsound(uint16_t alg, uint32_t usage)
{
	int enc = !!(usage & KF_USE_ENCRYPT), dec = !!(usage & KF_USE_DECRYPT);
	switch (alg) {
	case CRD_ALG_AES_CTR:
	case CRD_ALG_CHACHA20:
	case CRD_ALG_SNOW3G_UEA2:
	case CRD_ALG_ZUC_EEA3:
	case CRD_ALG_KASUMI_F8:
		return enc != dec ? "encrypt and decrypt are one operation for "
				    "a counter-mode cipher: give both or "
				    "neither"
				  : NULL;
	case CRD_ALG_AES_GCM:
	case CRD_ALG_AES_GCM_RFC4106:
	case CRD_ALG_AES_CCM:
	case CRD_ALG_CHACHA20_POLY1305:
		return enc && !dec ? "encrypt without decrypt protects nothing "
				     "for a counter-mode AEAD (client IVs "
				     "yield any ciphertext's keystream): "
				     "allow decrypt too, or decrypt alone"
				   : NULL;
	default:
		return NULL;
	}
}

static struct nk_spec spec_of(const Cryptod__KeyRequest *m)
{
	struct nk_spec s = {
		.name = m->name,
		.alg = (uint16_t)m->alg,
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

int keyreq_handle(struct client *c, uint32_t seq, const Cryptod__KeyRequest *m)
{
	const char *name = m->name ? m->name : "";
	int admin = client_is_admin(c);
	int err;

	if (!enabled)
		return send_error(c, seq, -ENODEV, errmsg(-ENODEV));
	switch (m->op) {
	case CRYPTOD__KEY_OP__KEY_LIST:
		return reply_list(c, seq);
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

	struct nk_spec s = spec_of(m);
	const char *unsound = usage_unsound(s.alg, s.usage);
	if (unsound && (m->op == CRYPTOD__KEY_OP__KEY_CREATE ||
			m->op == CRYPTOD__KEY_OP__KEY_IMPORT ||
			m->op == CRYPTOD__KEY_OP__KEY_UNWRAP))
		return send_error(c, seq, -EINVAL, unsound);
	/* A key no session could use is refused now, not at first use. */
	unsigned len = m->op == CRYPTOD__KEY_OP__KEY_IMPORT   ? m->key.len
		       : m->op == CRYPTOD__KEY_OP__KEY_CREATE ? s.key_len
							      : 0;
	if (len) {
		err = key_len_check(s.alg, len);
		if (err)
			return send_error(
				c, seq, err,
				err == CRD_ST_POLICY
					? "key shorter than the "
					  "daemon's key policy allows "
					  "(keys.min_bits)"
					: "no engine takes a key of "
					  "that length for this "
					  "algorithm");
	}
	switch (m->op) {
	case CRYPTOD__KEY_OP__KEY_CREATE:
		err = nk_create(&s);
		break;
	case CRYPTOD__KEY_OP__KEY_IMPORT:
		err = m->key.len > KF_KEY_MAX
			      ? -EINVAL
			      : nk_import(&s, m->key.data, m->key.len);
		break;
	case CRYPTOD__KEY_OP__KEY_UNWRAP:
		err = nk_import_wrapped(&s, m->wrapping_key.data,
					m->wrapping_key.len, m->wrapped.data,
					m->wrapped.len);
		break;
	case CRYPTOD__KEY_OP__KEY_ROTATE:
		err = nk_rotate(name);
		if (err > 0) {
			log_info("keys: %s rotated to version %d by uid %u",
				 name, err, (unsigned)c->uid);
			return reply_one(c, seq, name, (uint32_t)err);
		}
		break;
	case CRYPTOD__KEY_OP__KEY_WRAP: {
		uint8_t blob[KF_KEY_MAX + 16];
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
	case CRYPTOD__KEY_OP__KEY_DELETE:
		err = nk_delete(name);
		if (!err) {
			log_info("keys: %s deleted by uid %u", name,
				 (unsigned)c->uid);
			Cryptod__KeyReply r = CRYPTOD__KEY_REPLY__INIT;
			return send_reply(c, seq, &r);
		}
		break;
	default:
		err = -EOPNOTSUPP;
	}
	if (err)
		return send_error(c, seq, err, errmsg(err));
	log_info("keys: %s %s by uid %u", name,
		 m->op == CRYPTOD__KEY_OP__KEY_CREATE ? "created" : "imported",
		 (unsigned)c->uid);
	return reply_one(c, seq, name, 1);
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
	 * or generate, decrypt or verify. */
	int mac = crd_alg_kind(in.alg) == CRD_KIND_MAC;
	uint32_t enc = mac ? KF_USE_MAC_GENERATE : KF_USE_ENCRYPT;
	uint32_t dec = mac ? KF_USE_MAC_VERIFY : KF_USE_DECRYPT;
	uint32_t want = in.usage & (enc | dec);

	uint8_t *key = ks_map(KF_KEY_MAX);
	if (!key)
		return -ENOMEM;
	uint16_t key_len, alg;
	struct nk_key *ref;
	err = nk_open(m->key_name, m->key_version, c->uid, c->gid, g, ng, want,
		      key, &key_len, &alg, version, &ref);
	if (err) {
		ks_unmap(key, KF_KEY_MAX);
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
	if ((want & dec) && !(want & enc) && m->tag_len && m->tag_len != full) {
		ks_unmap(key, KF_KEY_MAX);
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
		.op_mask = (want & enc ? 1u << CRD_OP_ENCRYPT : 0) |
			   (want & dec ? 1u << CRD_OP_DECRYPT : 0),
	};
	err = session_create(&p, out);
	ks_unmap(key, KF_KEY_MAX);
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
