/* SPDX-License-Identifier: MIT */
#include "namedkeys.h"
#include "keystore.h"
#include "keywrap.h"
#include "log.h"
#include "pkeys.h"

#include <cryptod/ring_abi.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One key, wholly in one ks_map() mapping (so wiping it is one call),
 * sized by its key length: KF_MAX_VERSIONS slots of rec.key_len bytes,
 * so a 32-byte AES key takes 512 bytes of locked memory and only a key
 * pair its 2.4 KB slots (pkeys.h). */
struct nk_key {
	struct kf_record rec; /* v[i].key == slot i; rec.secret unused */
	size_t map_len;	      /* of the whole mapping */
	_Atomic uint64_t ops, bytes, last_use;
	unsigned refs;	/* the table's one, plus one per nk_open */
	int deleted;	/* out of the table, key bytes wiped */
	uint8_t keys[]; /* KF_MAX_VERSIONS * rec.key_len */
};

static struct {
	int dir_fd;
	const char *dir; /* the caller's, for messages; valid in nk_init */
	uint8_t *kek;	 /* KF_KEK_LEN bytes in ks_map memory */
	struct nk_key *keys[NK_MAX_KEYS]; /* owned; first n used */
	unsigned n;
} nk = { .dir_fd = -1 };

/* A key of key_len-byte versions, its rec.key_len set. */
static struct nk_key *key_new(uint16_t key_len)
{
	size_t len = sizeof(struct nk_key) + (size_t)KF_MAX_VERSIONS * key_len;
	struct nk_key *k = ks_map(len);

	if (!k)
		return NULL;
	k->map_len = len;
	k->rec.key_len = key_len;
	k->refs = 1;
	return k;
}

static uint8_t *slot(struct nk_key *k, unsigned i)
{
	return k->keys + (size_t)i * k->rec.key_len;
}

static size_t slots_len(const struct nk_key *k)
{
	return (size_t)KF_MAX_VERSIONS * k->rec.key_len;
}

static void key_repoint(struct nk_key *k)
{
	for (unsigned i = 0; i < KF_MAX_VERSIONS; i++)
		k->rec.v[i].key = slot(k, i);
}

static void key_free(struct nk_key *k)
{
	ks_unmap(k, k->map_len);
}

static void key_unref(struct nk_key *k)
{
	if (k && --k->refs == 0)
		key_free(k);
}

/* The bytes of version slot i in use: a key pair's DER (the rest of its
 * slot is zeros), else the whole key. */
static size_t key_bytes(struct nk_key *k, unsigned i)
{
	if (!crd_alg_pkey(k->rec.alg))
		return k->rec.key_len;
	return pk_der_len(slot(k, i), k->rec.key_len);
}

static int find(const char *name)
{
	for (unsigned i = 0; i < nk.n; i++)
		if (!strcmp(nk.keys[i]->rec.name, name))
			return (int)i;
	return -1;
}

/* Out of the table: the bytes are wiped now, the mapping when the last
 * session on it closes. */
static void remove_at(unsigned i)
{
	struct nk_key *k = nk.keys[i];

	nk.keys[i] = nk.keys[--nk.n];
	nk.keys[nk.n] = NULL;
	explicit_bzero(k->keys, slots_len(k));
	k->deleted = 1;
	key_unref(k);
}

/* The algorithm table's use column: no key, or two (authenc's auth_key),
 * is no named key. */
int nk_alg_ok(unsigned alg)
{
	return crd_alg_use(alg) != CRD_USE_NO;
}

static int load_one(const char *file)
{
	struct kf_record r;
	char why[200];
	struct nk_key *k;

	int err = kf_read(nk.dir_fd, file, nk.kek, &r, why, sizeof(why));
	if (err) {
		log_err("keys: %s/%s: %s; not loaded", nk.dir, file, why);
		return err;
	}
	if (find(r.name) >= 0 || nk.n == NK_MAX_KEYS || !nk_alg_ok(r.alg)) {
		log_err("keys: %s/%s: %s; not loaded", nk.dir, file,
			nk.n == NK_MAX_KEYS ? "registry full"
			: find(r.name) >= 0 ? "duplicate name"
					    : "algorithm takes no named key");
		kf_record_fini(&r);
		return -EINVAL;
	}
	k = key_new(r.key_len);
	if (!k) {
		kf_record_fini(&r);
		return -ENOMEM;
	}
	k->rec = r;
	k->rec.secret = NULL;
	for (unsigned i = 0; i < r.nversions; i++)
		memcpy(slot(k, i), r.v[i].key, r.key_len);
	key_repoint(k);
	kf_record_fini(&r);
	nk.keys[nk.n++] = k;
	return 0;
}

int nk_init(const char *dir, const uint8_t kek[KF_KEK_LEN])
{
	int loaded = 0;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	nk.dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (nk.dir_fd < 0)
		return -errno;
	/* Others who may write here could delete or swap key files (not
	 * forge them: they lack the KEK). */
	struct stat st;
	if (fstat(nk.dir_fd, &st) < 0 || st.st_uid != geteuid() ||
	    st.st_mode & 022) {
		log_err("keys: %s: must be the daemon's (uid %u) and not "
			"writable by group or others (uid %u, mode %04o)",
			dir, (unsigned)geteuid(), (unsigned)st.st_uid,
			(unsigned)(st.st_mode & 07777));
		close(nk.dir_fd);
		nk.dir_fd = -1;
		return -EPERM;
	}
	nk.kek = ks_map(KF_KEK_LEN);
	if (!nk.kek) {
		close(nk.dir_fd);
		nk.dir_fd = -1;
		return -ENOMEM;
	}
	memcpy(nk.kek, kek, KF_KEK_LEN);
	nk.dir = dir;

	int fd = dup(nk.dir_fd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		nk_fini();
		return -errno;
	}
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.') {
			/* An interrupted kf_write's temp file: never the
			 * key (the rename did not happen), so drop it. */
			if (l > 5 && !strcmp(e->d_name + l - 4, ".tmp")) {
				log_warn("keys: %s/%s: stale temp file from an "
					 "interrupted write; removed",
					 dir, e->d_name);
				(void)unlinkat(nk.dir_fd, e->d_name, 0);
			}
			continue;
		}
		if (l < 5 || strcmp(e->d_name + l - 4, ".key")) {
			log_warn("keys: %s/%s: not a key file; ignored", dir,
				 e->d_name);
			continue;
		}
		if (load_one(e->d_name) == 0)
			loaded++;
	}
	closedir(d);
	nk.dir = NULL;
	return loaded;
}

void nk_fini(void)
{
	while (nk.n)
		remove_at(nk.n - 1);
	ks_unmap(nk.kek, KF_KEK_LEN);
	nk.kek = NULL;
	if (nk.dir_fd >= 0)
		close(nk.dir_fd);
	nk.dir_fd = -1;
}

unsigned nk_count(void)
{
	return nk.n;
}

static int spec_ok(const struct nk_spec *s)
{
	return s->name && kf_name_ok(s->name) && nk_alg_ok(s->alg) &&
	       s->key_len >= 1 && s->key_len <= kf_key_max(s->alg) &&
	       s->usage && !(s->usage & ~KF_USE_ALL) && s->exportable <= 1 &&
	       s->nuids <= KF_MAX_IDS && s->ngids <= KF_MAX_IDS &&
	       (!s->nuids || s->uids) && (!s->ngids || s->gids);
}

/* The new key k, complete in memory: persist, then publish. */
static int publish_new(struct nk_key *k)
{
	int err = kf_write(nk.dir_fd, &k->rec, nk.kek);

	if (err) {
		key_free(k);
		return err;
	}
	nk.keys[nk.n++] = k;
	return 0;
}

/* A version's bytes into its slot: a key pair's DER then zeros (the
 * slot was wiped), others exactly key_len. */
static int fill(struct nk_key *k, unsigned i, const uint8_t *key, size_t len)
{
	int pkey = crd_alg_pkey(k->rec.alg);

	if (pkey ? !key || !len || len > k->rec.key_len ||
			    pk_der_len(key, len) != len
		 : len != k->rec.key_len)
		return -EINVAL;
	if (key)
		memcpy(slot(k, i), key, len);
	else if (getrandom(slot(k, i), len, 0) != (ssize_t)len)
		return -EIO;
	return 0;
}

static int add(const struct nk_spec *s, const uint8_t *key, size_t len)
{
	if (nk.dir_fd < 0)
		return -ENODEV;
	if (!spec_ok(s))
		return -EINVAL;
	if (find(s->name) >= 0)
		return -EEXIST;
	if (nk.n == NK_MAX_KEYS)
		return -ENOSPC;
	struct nk_key *k = key_new(s->key_len);
	if (!k)
		return -ENOMEM;
	struct kf_record *r = &k->rec;
	strcpy(r->name, s->name);
	r->alg = s->alg;
	r->key_len = s->key_len;
	r->usage = s->usage;
	r->exportable = s->exportable;
	r->nuids = s->nuids;
	r->ngids = s->ngids;
	/* memcpy's pointers must be valid even for no bytes: an empty
	 * list may come as NULL. */
	if (s->nuids)
		memcpy(r->uids, s->uids, sizeof(uint32_t) * s->nuids);
	if (s->ngids)
		memcpy(r->gids, s->gids, sizeof(uint32_t) * s->ngids);
	r->nversions = 1;
	r->v[0].version = 1;
	r->v[0].created = (uint64_t)time(NULL);
	key_repoint(k);
	int err = fill(k, 0, key, len);
	if (err) {
		key_free(k);
		return err;
	}
	return publish_new(k);
}

int nk_create(const struct nk_spec *s)
{
	return add(s, NULL, s->key_len);
}

int nk_import(const struct nk_spec *s, const uint8_t *key, size_t len)
{
	if (!key)
		return -EINVAL;
	return add(s, key, len);
}

int nk_rotate(const char *name)
{
	return nk_rotate_to(name, NULL, 0);
}

int nk_rotate_to(const char *name, const uint8_t *key, size_t len)
{
	int i = find(name);

	if (i < 0)
		return -ENOENT;
	struct nk_key *k = nk.keys[i];
	/* Build the next state in a scratch copy: the key in force changes
	 * only once the file holding the new state is in place. */
	struct nk_key *t = key_new(k->rec.key_len);
	if (!t)
		return -ENOMEM;
	t->rec = k->rec;
	memcpy(t->keys, k->keys, slots_len(k));
	unsigned n = t->rec.nversions;
	uint32_t ver = t->rec.v[n - 1].version + 1;
	int err = 0;
	if (ver > INT32_MAX) {
		err = -EOVERFLOW;
		goto out;
	}
	if (n == KF_MAX_VERSIONS) {
		/* Retire the oldest; its bytes are overwritten below. */
		memmove(slot(t, 0), slot(t, 1),
			(size_t)t->rec.key_len * (n - 1));
		memmove(&t->rec.v[0], &t->rec.v[1],
			sizeof(t->rec.v[0]) * (n - 1));
		n--;
	}
	t->rec.v[n].version = ver;
	t->rec.v[n].created = (uint64_t)time(NULL);
	t->rec.nversions = (uint8_t)(n + 1);
	explicit_bzero(slot(t, n), t->rec.key_len);
	key_repoint(t);
	err = fill(t, n, key, key ? len : t->rec.key_len);
	if (err)
		goto out;
	err = kf_write(nk.dir_fd, &t->rec, nk.kek);
	if (err)
		goto out;
	k->rec = t->rec;
	memcpy(k->keys, t->keys, slots_len(k));
	key_repoint(k);
	err = (int)ver;
out:
	key_free(t);
	return err;
}

int nk_delete(const char *name)
{
	int i = find(name);

	if (i < 0)
		return -ENOENT;
	int err = kf_delete(nk.dir_fd, name);
	if (err)
		return err;
	remove_at((unsigned)i);
	return 0;
}

static int version_index(const struct nk_key *k, uint32_t version)
{
	if (version == 0)
		return k->rec.nversions - 1;
	for (unsigned i = 0; i < k->rec.nversions; i++)
		if (k->rec.v[i].version == version)
			return (int)i;
	return -1;
}

int nk_wrap(const char *name, uint32_t version, const uint8_t *wkek,
	    size_t wkek_len, uint8_t *out, size_t out_cap)
{
	int i = find(name);

	if (i < 0)
		return -ENOENT;
	struct nk_key *k = nk.keys[i];
	int v = version_index(k, version);
	if (v < 0)
		return -ENOENT;
	if (!k->rec.exportable)
		return -EPERM;
	/* A key pair: its PKCS#8 DER, not the slot's padding. */
	return kwp_wrap(wkek, wkek_len, slot(k, (unsigned)v),
			key_bytes(k, (unsigned)v), out, out_cap);
}

int nk_pub(const char *name, uint32_t version, uint8_t *out, size_t cap)
{
	int i = find(name);

	if (i < 0)
		return -ENOENT;
	struct nk_key *k = nk.keys[i];
	int v = version_index(k, version);
	if (v < 0)
		return -ENOENT;
	if (!crd_alg_pkey(k->rec.alg))
		return -EINVAL;
	return pk_public(slot(k, (unsigned)v), key_bytes(k, (unsigned)v), out,
			 cap);
}

int nk_info(const char *name, struct nk_info *o)
{
	int i = find(name);

	if (i < 0)
		return -ENOENT;
	struct nk_key *k = nk.keys[i];
	const struct kf_record *r = &k->rec;
	memset(o, 0, sizeof(*o));
	strcpy(o->name, r->name);
	o->alg = r->alg;
	o->key_len = r->key_len;
	o->usage = r->usage;
	o->exportable = r->exportable;
	o->nuids = r->nuids;
	o->ngids = r->ngids;
	o->nversions = r->nversions;
	memcpy(o->uids, r->uids, sizeof(o->uids));
	memcpy(o->gids, r->gids, sizeof(o->gids));
	for (unsigned v = 0; v < r->nversions; v++) {
		o->versions[v] = r->v[v].version;
		o->created[v] = r->v[v].created;
	}
	o->ops = atomic_load_explicit(&k->ops, memory_order_relaxed);
	o->bytes = atomic_load_explicit(&k->bytes, memory_order_relaxed);
	o->last_use = atomic_load_explicit(&k->last_use, memory_order_relaxed);
	return 0;
}

const char *nk_name_at(unsigned i)
{
	return i < nk.n ? nk.keys[i]->rec.name : NULL;
}

static int acl_ok(const struct kf_record *r, uid_t uid, gid_t gid,
		  const gid_t *groups, unsigned ngroups)
{
	for (unsigned i = 0; i < r->nuids; i++)
		if (r->uids[i] == uid)
			return 1;
	for (unsigned i = 0; i < r->ngids; i++) {
		if (r->gids[i] == gid)
			return 1;
		for (unsigned g = 0; g < ngroups; g++)
			if (r->gids[i] == groups[g])
				return 1;
	}
	return 0;
}

int nk_allowed(const char *name, uid_t uid, gid_t gid, const gid_t *groups,
	       unsigned ngroups)
{
	int i = find(name);

	return i >= 0 && acl_ok(&nk.keys[i]->rec, uid, gid, groups, ngroups);
}

int nk_open(const char *name, uint32_t version, uid_t uid, gid_t gid,
	    const gid_t *groups, unsigned ngroups, uint32_t want, uint8_t *key,
	    uint16_t *key_len, uint16_t *alg, uint32_t *version_out,
	    struct nk_key **ref)
{
	int i = find(name);

	if (i < 0)
		return -ENOENT;
	struct nk_key *k = nk.keys[i];
	/* The ACL before anything else: a stranger learns only that it may
	 * not, not which versions exist or what the key allows. */
	if (!acl_ok(&k->rec, uid, gid, groups, ngroups))
		return -EACCES;
	if (!want || want & ~k->rec.usage)
		return -EPERM;
	int v = version_index(k, version);
	if (v < 0)
		return -ENOENT;
	size_t n = key_bytes(k, (unsigned)v);
	memcpy(key, slot(k, (unsigned)v), n);
	*key_len = (uint16_t)n;
	*alg = k->rec.alg;
	*version_out = k->rec.v[v].version;
	k->refs++;
	*ref = k;
	return 0;
}

void nk_close(struct nk_key *ref)
{
	key_unref(ref); /* NULL: a session on a client's key */
}

void nk_account(struct nk_key *ref, uint64_t ops, uint64_t bytes)
{
	if (!ref)
		return;
	atomic_fetch_add_explicit(&ref->ops, ops, memory_order_relaxed);
	atomic_fetch_add_explicit(&ref->bytes, bytes, memory_order_relaxed);
	atomic_store_explicit(&ref->last_use, (uint64_t)time(NULL),
			      memory_order_relaxed);
}
