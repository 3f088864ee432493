/* SPDX-License-Identifier: MIT */
#include "keyfile.h"
#include "keystore.h"
#include "names.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <linux/keyctl.h>

#include <cryptod/hex.h>
#include <cryptod/ring_abi.h>

static const char kf_magic[8] = { 'C', 'R', 'Y', 'P', 'T', 'O', 'D', 'K' };

_Static_assert(1 + KF_NAME_MAX + 2 + 2 + 4 + 1 + 1 + 4 * KF_MAX_IDS + 1 +
			       4 * KF_MAX_IDS + 1 +
			       KF_MAX_VERSIONS * (4 + 8 + KF_PKEY_MAX) <=
		       KF_RECORD_MAX,
	       "the largest record fits KF_RECORD_MAX");
_Static_assert((int)KF_PKEY_MAX <= (int)CTL_PKEY_MAX &&
		       KF_KEY_MAX <= KF_PKEY_MAX,
	       "a key pair's slot crosses the control socket");
_Static_assert(KF_RECORD_MAX % 4096 == 0, "whole pages");

unsigned kf_pk_slot_len(unsigned alg)
{
	char type[16];
	const char *param;

	if (crd_alg_pkey_type(alg, type, sizeof(type), &param))
		return 0;
	/* RSA's PKCS#8: n, d and the five CRT values (each at most half
	 * n's bytes, plus a sign byte), e, headers: 4.5 moduli and 128
	 * bytes bounds it (RSA-4096: 2432; OpenSSL writes about 2375).
	 * The curves' PKCS#8 with its public key is under 256 (P-521's
	 * about 240). */
	unsigned slot =
		strcmp(type, "RSA") ? 256 : crd_alg_tag_len(alg) * 9 / 2 + 128;
	return slot <= KF_PKEY_MAX ? slot : 0;
}

unsigned kf_key_max(unsigned alg)
{
	return crd_alg_pkey(alg) ? kf_pk_slot_len(alg) : KF_KEY_MAX;
}

void kf_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

int kf_name_ok(const char *name)
{
	size_t n = strnlen(name, KF_NAME_MAX + 1);

	if (n == 0 || n > KF_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return 0;
	}
	return 1;
}

/* A bounded cursor over the record: every read checks the room left. */
struct cur {
	uint8_t *p;
	size_t left;
	int bad;
};

static uint8_t *cur_take(struct cur *c, size_t n)
{
	if (c->bad || c->left < n) {
		c->bad = 1;
		return NULL;
	}
	uint8_t *p = c->p;
	c->p += n;
	c->left -= n;
	return p;
}

static uint64_t cur_uint(struct cur *c, size_t n)
{
	const uint8_t *p = cur_take(c, n);
	uint64_t v = 0;

	for (size_t i = 0; p && i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_uint(struct cur *c, uint64_t v, size_t n)
{
	uint8_t *p = cur_take(c, n);

	for (size_t i = n; p && i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

static void put_bytes(struct cur *c, const void *src, size_t n)
{
	uint8_t *p = cur_take(c, n);

	if (p)
		memcpy(p, src, n);
}

static int record_valid(const struct kf_record *r, char *why, size_t len)
{
	if (!kf_name_ok(r->name)) {
		kf_why(why, len, "bad key name");
		return 0;
	}
	if (r->key_len == 0 || r->key_len > kf_key_max(r->alg)) {
		kf_why(why, len, "key length %u out of range", r->key_len);
		return 0;
	}
	if (r->nuids > KF_MAX_IDS || r->ngids > KF_MAX_IDS) {
		kf_why(why, len, "too many uids or gids");
		return 0;
	}
	if (r->nversions == 0 || r->nversions > KF_MAX_VERSIONS) {
		kf_why(why, len, "%u versions", r->nversions);
		return 0;
	}
	if (r->usage == 0 || r->usage & ~KF_USE_ALL || r->exportable > 1) {
		kf_why(why, len, "bad usage or exportable flag");
		return 0;
	}
	for (unsigned i = 1; i < r->nversions; i++)
		if (r->v[i].version <= r->v[i - 1].version) {
			kf_why(why, len, "versions out of order");
			return 0;
		}
	return 1;
}

/* Serialise r into buf (KF_RECORD_MAX); the length, or 0. */
static size_t record_put(const struct kf_record *r, uint8_t *buf)
{
	struct cur c = { buf, KF_RECORD_MAX, 0 };
	size_t nl = strlen(r->name);

	put_uint(&c, nl, 1);
	put_bytes(&c, r->name, nl);
	put_uint(&c, r->alg, 2);
	put_uint(&c, r->key_len, 2);
	put_uint(&c, r->usage, 4);
	put_uint(&c, r->exportable, 1);
	put_uint(&c, r->nuids, 1);
	for (unsigned i = 0; i < r->nuids; i++)
		put_uint(&c, r->uids[i], 4);
	put_uint(&c, r->ngids, 1);
	for (unsigned i = 0; i < r->ngids; i++)
		put_uint(&c, r->gids[i], 4);
	put_uint(&c, r->nversions, 1);
	for (unsigned i = 0; i < r->nversions; i++) {
		put_uint(&c, r->v[i].version, 4);
		put_uint(&c, r->v[i].created, 8);
		put_bytes(&c, r->v[i].key, r->key_len);
	}
	return c.bad ? 0 : KF_RECORD_MAX - c.left;
}

/* Parse buf[0..n) into r; key pointers point into buf. */
static int record_get(uint8_t *buf, size_t n, struct kf_record *r, char *why,
		      size_t len)
{
	struct cur c = { buf, n, 0 };
	size_t nl = cur_uint(&c, 1);
	const uint8_t *name = cur_take(&c, nl);

	if (name && nl <= KF_NAME_MAX) {
		memcpy(r->name, name, nl);
		r->name[nl] = '\0';
	} else {
		c.bad = 1;
	}
	r->alg = (uint16_t)cur_uint(&c, 2);
	r->key_len = (uint16_t)cur_uint(&c, 2);
	r->usage = (uint32_t)cur_uint(&c, 4);
	r->exportable = (uint8_t)cur_uint(&c, 1);
	r->nuids = (uint8_t)cur_uint(&c, 1);
	for (unsigned i = 0; i < r->nuids && i < KF_MAX_IDS; i++)
		r->uids[i] = (uint32_t)cur_uint(&c, 4);
	if (r->nuids > KF_MAX_IDS)
		c.bad = 1;
	r->ngids = (uint8_t)cur_uint(&c, 1);
	for (unsigned i = 0; i < r->ngids && i < KF_MAX_IDS; i++)
		r->gids[i] = (uint32_t)cur_uint(&c, 4);
	if (r->ngids > KF_MAX_IDS)
		c.bad = 1;
	r->nversions = (uint8_t)cur_uint(&c, 1);
	if (r->nversions > KF_MAX_VERSIONS || r->key_len > KF_PKEY_MAX)
		c.bad = 1;
	for (unsigned i = 0; !c.bad && i < r->nversions; i++) {
		r->v[i].version = (uint32_t)cur_uint(&c, 4);
		r->v[i].created = cur_uint(&c, 8);
		r->v[i].key = cur_take(&c, r->key_len);
	}
	if (c.bad || c.left) {
		kf_why(why, len, "record malformed (%s)",
		       c.bad ? "short" : "trailing bytes");
		return 0;
	}
	return record_valid(r, why, len);
}

/* AES-256-GCM, aad = the header; in and out may be the same buffer. */
static int gcm(int enc, const uint8_t kek[KF_KEK_LEN], const uint8_t *hdr,
	       const uint8_t *in, size_t n, uint8_t *out, uint8_t tag[16])
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int l = 0, ok;

	if (!ctx)
		return -ENOMEM;
	ok = EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL, enc) &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) &&
	     EVP_CipherInit_ex(ctx, NULL, NULL, kek, hdr + 16, enc) &&
	     EVP_CipherUpdate(ctx, NULL, &l, hdr, KF_HEADER_LEN) &&
	     EVP_CipherUpdate(ctx, out, &l, in, (int)n);
	if (ok && !enc)
		ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag);
	if (ok)
		ok = EVP_CipherFinal_ex(ctx, out + l, &l) == 1;
	if (ok && enc)
		ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(ctx);
	return ok ? 0 : -EBADMSG;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int kf_write(int dir_fd, const struct kf_record *rec,
	     const uint8_t kek[KF_KEK_LEN])
{
	char tmp[KF_NAME_MAX + 8], dst[KF_NAME_MAX + 8];
	uint8_t *plain, *file;
	int err, fd = -1;

	if (!record_valid(rec, NULL, 0))
		return -EINVAL;
	snprintf(tmp, sizeof(tmp), ".%s.tmp", rec->name);
	snprintf(dst, sizeof(dst), "%s.key", rec->name);
	plain = ks_map(KF_RECORD_MAX);
	file = malloc(KF_FILE_MAX);
	if (!plain || !file) {
		err = -ENOMEM;
		goto out_free;
	}
	size_t n = record_put(rec, plain);
	if (!n) {
		err = -EINVAL;
		goto out_free;
	}
	memset(file, 0, KF_HEADER_LEN);
	memcpy(file, kf_magic, 8);
	struct cur h = { file + 8, KF_HEADER_LEN - 8, 0 };
	put_uint(&h, KF_FORMAT_VERSION, 2);
	put_uint(&h, KF_HEADER_LEN, 2);
	put_uint(&h, n, 4);
	if (getrandom(file + 16, 12, 0) != 12) {
		err = -EIO;
		goto out_free;
	}
	err = gcm(1, kek, file, plain, n, file + KF_HEADER_LEN,
		  file + KF_HEADER_LEN + n);
	if (err)
		goto out_free;

	fd = openat(dir_fd, tmp,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	err = write_all(fd, file, KF_HEADER_LEN + n + KF_TAG_LEN);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(dir_fd, tmp, dir_fd, dst) < 0)
		err = -errno;
	if (err)
		(void)unlinkat(dir_fd, tmp, 0);
	else if (fsync(dir_fd) < 0)
		err = -errno;
out_free:
	free(file);
	ks_unmap(plain, KF_RECORD_MAX);
	return err;
}

int kf_delete(int dir_fd, const char *name)
{
	char dst[KF_NAME_MAX + 8];

	if (!kf_name_ok(name))
		return -EINVAL;
	snprintf(dst, sizeof(dst), "%s.key", name);
	if (unlinkat(dir_fd, dst, 0) < 0)
		return -errno;
	return fsync(dir_fd) < 0 ? -errno : 0;
}

void kf_record_fini(struct kf_record *rec)
{
	ks_unmap(rec->secret, KF_RECORD_MAX);
	explicit_bzero(rec, sizeof(*rec));
}

/* The whole of an open file, at most max bytes; the length or -errno. */
static ssize_t read_whole(int fd, uint8_t *buf, size_t max)
{
	size_t got = 0;

	for (;;) {
		ssize_t r = read(fd, buf + got, max - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return (ssize_t)got;
		got += (size_t)r;
		if (got == max) {
			uint8_t extra;
			r = read(fd, &extra, 1);
			return r == 0 ? (ssize_t)got : -EFBIG;
		}
	}
}

int kf_read(int dir_fd, const char *file, const uint8_t kek[KF_KEK_LEN],
	    struct kf_record *rec, char *why, size_t why_len)
{
	uint8_t *buf = malloc(KF_FILE_MAX);
	struct stat st;
	int err = -EBADMSG;

	memset(rec, 0, sizeof(*rec));
	if (!buf) {
		kf_why(why, why_len, "out of memory");
		return -ENOMEM;
	}
	int fd = openat(dir_fd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		kf_why(why, why_len, "cannot open: %s", strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		kf_why(why, why_len, "not a regular file");
		goto out;
	}
	ssize_t len = read_whole(fd, buf, KF_FILE_MAX);
	close(fd);
	if (len < 0) {
		err = (int)len == -EFBIG ? -EBADMSG : (int)len;
		kf_why(why, why_len, "%s",
		       len == -EFBIG ? "longer than any key file"
				     : "read failed");
		goto out;
	}
	err = kf_parse(buf, (size_t)len, file, kek, rec, why, why_len);
out:
	free(buf);
	return err;
}

int kf_parse(const uint8_t *buf, size_t len, const char *file,
	     const uint8_t kek[KF_KEK_LEN], struct kf_record *rec, char *why,
	     size_t why_len)
{
	memset(rec, 0, sizeof(*rec));
	if (len < KF_HEADER_LEN + KF_TAG_LEN) {
		kf_why(why, why_len, "truncated: %zu bytes, no whole header",
		       len);
		return -EBADMSG;
	}
	if (memcmp(buf, kf_magic, 8)) {
		kf_why(why, why_len, "not a cryptod key file (bad magic)");
		return -EBADMSG;
	}
	struct cur h = { (uint8_t *)buf + 8, KF_HEADER_LEN - 8, 0 };
	unsigned ver = (unsigned)cur_uint(&h, 2);
	unsigned hlen = (unsigned)cur_uint(&h, 2);
	size_t n = (size_t)cur_uint(&h, 4);
	if (ver != KF_FORMAT_VERSION || hlen != KF_HEADER_LEN) {
		kf_why(why, why_len,
		       "format version %u, header %u bytes: this daemon reads "
		       "version %u",
		       ver, hlen, KF_FORMAT_VERSION);
		return -EBADMSG;
	}
	if (n > KF_RECORD_MAX || len != KF_HEADER_LEN + n + KF_TAG_LEN) {
		kf_why(why, why_len,
		       "length mismatch: header says %zu sealed bytes, file "
		       "has %zu bytes (truncated or extended)",
		       n, len);
		return -EBADMSG;
	}
	rec->secret = ks_map(KF_RECORD_MAX);
	if (!rec->secret) {
		kf_why(why, why_len, "out of locked memory");
		return -ENOMEM;
	}
	uint8_t tag[KF_TAG_LEN];
	memcpy(tag, buf + KF_HEADER_LEN + n, KF_TAG_LEN);
	if (gcm(0, kek, buf, buf + KF_HEADER_LEN, n, rec->secret, tag)) {
		kf_why(why, why_len,
		       "authentication failed: corrupted, or sealed under "
		       "another key-encryption key");
		goto out_wipe;
	}
	if (!record_get(rec->secret, n, rec, why, why_len))
		goto out_wipe;
	/* The name inside, not the file name, is what was sealed: a key
	 * file renamed to another key's name is refused. */
	size_t nl = strlen(rec->name);
	if (strncmp(file, rec->name, nl) || strcmp(file + nl, ".key")) {
		kf_why(why, why_len,
		       "holds key '%s', not the one its name says", rec->name);
		goto out_wipe;
	}
	return 0;
out_wipe:
	kf_record_fini(rec);
	return -EBADMSG;
}

int kf_record_parse(uint8_t *plain, size_t n, struct kf_record *rec, char *why,
		    size_t why_len)
{
	memset(rec, 0, sizeof(*rec));
	if (n > KF_RECORD_MAX || !record_get(plain, n, rec, why, why_len)) {
		memset(rec, 0, sizeof(*rec));
		return -EBADMSG;
	}
	return 0;
}

/* 32 raw bytes, or 64 hex digits and an optional newline. */
static int kek_payload(const uint8_t *buf, ssize_t n, uint8_t kek[KF_KEK_LEN],
		       char *why, size_t why_len)
{
	int err = -EINVAL;

	if (n == KF_KEK_LEN) {
		memcpy(kek, buf, KF_KEK_LEN);
		err = 0;
	} else if (n == 2 * KF_KEK_LEN ||
		   (n == 2 * KF_KEK_LEN + 1 && buf[n - 1] == '\n')) {
		int bad = 0;
		for (int i = 0; i < KF_KEK_LEN; i++) {
			int hi = crd_hex_val(buf[2 * i]),
			    lo = crd_hex_val(buf[2 * i + 1]);
			bad |= hi < 0 || lo < 0;
			kek[i] = (uint8_t)((hi & 15) << 4 | (lo & 15));
		}
		err = bad ? -EINVAL : 0;
	}
	if (err) {
		explicit_bzero(kek, KF_KEK_LEN);
		kf_why(why, why_len,
		       "must hold %d raw bytes or %d hex digits (%zd bytes "
		       "read)",
		       KF_KEK_LEN, 2 * KF_KEK_LEN, n);
	}
	return err;
}

int kf_kek_read(const char *path, uid_t owner, int credential,
		uint8_t kek[KF_KEK_LEN], char *why, size_t why_len)
{
	uint8_t *buf;
	struct stat st;
	int err = -EINVAL;

	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		kf_why(why, why_len, "cannot open: %s%s", strerror(errno),
		       err == -EACCES && !credential
			       ? " (the daemon runs as its own user: make the "
				 "file that user's, mode 0400, or hand it over "
				 "with LoadCredential= and keys.kek = "
				 "credential:NAME)"
			       : "");
		return err;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		kf_why(why, why_len, "not a regular file");
		return -EINVAL;
	}
	/* Root's, or the daemon's own (owner): nobody else may have
	 * written it. */
	if (st.st_uid != owner && st.st_uid != 0) {
		close(fd);
		kf_why(why, why_len,
		       "owned by uid %u, must be root's or uid %u's",
		       (unsigned)st.st_uid, (unsigned)owner);
		return -EPERM;
	}
	if (st.st_mode & (credential ? 007 : 077)) {
		close(fd);
		kf_why(why, why_len, "mode %04o lets %s at it; chmod 0400",
		       (unsigned)(st.st_mode & 07777),
		       credential ? "others" : "group or others");
		return -EPERM;
	}
	buf = ks_map(4096);
	if (!buf) {
		close(fd);
		kf_why(why, why_len, "out of locked memory");
		return -ENOMEM;
	}
	ssize_t n = read_whole(fd, buf, 4096);
	close(fd);
	err = kek_payload(buf, n, kek, why, why_len);
	ks_unmap(buf, 4096);
	return err;
}

int kf_kek_keyring(const char *desc, uint8_t kek[KF_KEK_LEN], char *why,
		   size_t why_len)
{
	long id = syscall(SYS_request_key, "user", desc, NULL, 0);
	if (id < 0) {
		int err = -errno;
		kf_why(why, why_len,
		       "no \"user\" key of that description in the daemon's "
		       "keyrings: %s",
		       strerror(errno));
		return err == -ENOKEY || err == -EKEYREVOKED ||
				       err == -EKEYEXPIRED
			       ? -ENOKEY
			       : err;
	}
	uint8_t *buf = ks_map(4096);
	if (!buf) {
		kf_why(why, why_len, "out of locked memory");
		return -ENOMEM;
	}
	long n = syscall(SYS_keyctl, KEYCTL_READ, id, buf, 4096);
	int err;
	if (n < 0) {
		err = -errno;
		kf_why(why, why_len, "KEYCTL_READ: %s", strerror(errno));
	} else {
		err = kek_payload(buf, n > 4096 ? 4097 : (ssize_t)n, kek, why,
				  why_len);
	}
	ks_unmap(buf, 4096);
	return err;
}
