/* SPDX-License-Identifier: MIT */
/*
 * Named-key files (daemon/keys/keyfile.c): a round trip of every field; the
 * file holds no key byte in the clear and is mode 0600; a file cut at
 * every length and every single bit flipped is refused with a reason and
 * leaves nothing loaded; a wrong KEK, a renamed file, bad records and a
 * stale temp file; the KEK file's forms, owner and mode checks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/keyctl.h>

#include "keyfile.h"

#include <cryptod/ring_abi.h>

struct fx {
	char dir[64];
	int dfd;
	uint8_t kek[KF_KEK_LEN];
	uint8_t keys[3][64];
	struct kf_record rec;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/test_keyfile.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->dfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < KF_KEK_LEN; i++)
		f->kek[i] = (uint8_t)(0xc0 ^ i);
	for (int v = 0; v < 3; v++)
		for (int i = 0; i < 64; i++)
			f->keys[v][i] = (uint8_t)(0x81 + 37 * v + 11 * i);
	struct kf_record *r = &f->rec;
	strcpy(r->name, "db-master.v1");
	r->alg = 1;
	r->key_len = 32;
	r->usage = KF_USE_ENCRYPT | KF_USE_DECRYPT;
	r->exportable = 1;
	r->nuids = 2;
	r->uids[0] = 1000;
	r->uids[1] = 4000000000u;
	r->ngids = 1;
	r->gids[0] = 27;
	r->nversions = 3;
	for (int v = 0; v < 3; v++) {
		r->v[v].version = (uint32_t)(v * 2 + 1);
		r->v[v].created = 1700000000ull + (uint64_t)v;
		r->v[v].key = f->keys[v];
	}
	*state = f;
	return f->dfd < 0 ? -1 : 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	close(f->dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static size_t slurp(struct fx *f, const char *name, uint8_t *buf, size_t max)
{
	int fd = openat(f->dfd, name, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, max);
	close(fd);
	assert_true(n >= 0);
	return (size_t)n;
}

static void put(struct fx *f, const char *name, const uint8_t *buf, size_t n)
{
	int fd = openat(f->dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	close(fd);
}

static int contains(const uint8_t *hay, size_t n, const uint8_t *needle,
		    size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (!memcmp(hay + i, needle, m))
			return 1;
	return 0;
}

static void test_round_trip(void **state)
{
	struct fx *f = *state;
	struct kf_record got;
	char why[256] = "";
	struct stat st;

	assert_int_equal(kf_write(f->dfd, &f->rec, f->kek), 0);
	assert_int_equal(fstatat(f->dfd, "db-master.v1.key", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* No temp file left behind. */
	assert_int_equal(fstatat(f->dfd, ".db-master.v1.tmp", &st, 0), -1);

	assert_int_equal(kf_read(f->dfd, "db-master.v1.key", f->kek, &got, why,
				 sizeof(why)),
			 0);
	assert_string_equal(got.name, "db-master.v1");
	assert_int_equal(got.alg, 1);
	assert_int_equal(got.key_len, 32);
	assert_int_equal(got.usage, KF_USE_ENCRYPT | KF_USE_DECRYPT);
	assert_int_equal(got.exportable, 1);
	assert_int_equal(got.nuids, 2);
	assert_int_equal(got.uids[1], 4000000000u);
	assert_int_equal(got.ngids, 1);
	assert_int_equal(got.gids[0], 27);
	assert_int_equal(got.nversions, 3);
	for (int v = 0; v < 3; v++) {
		assert_int_equal(got.v[v].version, v * 2 + 1);
		assert_int_equal(got.v[v].created, 1700000000ull + v);
		assert_memory_equal(got.v[v].key, f->keys[v], 32);
		/* The key bytes live in the record's own locked memory. */
		assert_true(got.v[v].key >= got.secret &&
			    got.v[v].key < got.secret + KF_RECORD_MAX);
	}
	kf_record_fini(&got);
	assert_null(got.secret);

	/* Nothing of any key in the clear on disk, not even 8 bytes. */
	uint8_t buf[KF_FILE_MAX];
	size_t n = slurp(f, "db-master.v1.key", buf, sizeof(buf));
	for (int v = 0; v < 3; v++)
		for (int off = 0; off + 8 <= 32; off += 8)
			assert_false(contains(buf, n, f->keys[v] + off, 8));
	/* Two writes of the same record differ (fresh nonce). */
	assert_int_equal(kf_write(f->dfd, &f->rec, f->kek), 0);
	uint8_t buf2[KF_FILE_MAX];
	assert_int_equal(slurp(f, "db-master.v1.key", buf2, sizeof(buf2)), n);
	assert_memory_not_equal(buf, buf2, n);
}

static void expect_refused(struct fx *f, const char *file, const char *what)
{
	struct kf_record got;
	char why[256] = "";

	memset(&got, 0x55, sizeof(got));
	int err = kf_read(f->dfd, file, f->kek, &got, why, sizeof(why));
	if (err != -EBADMSG)
		fail_msg("%s: got %d, want -EBADMSG", what, err);
	assert_true(strlen(why) > 0);
	assert_null(got.secret); /* nothing half-loaded */
	assert_int_equal(got.nversions, 0);
}

static void test_truncated(void **state)
{
	struct fx *f = *state;
	uint8_t buf[KF_FILE_MAX];
	char why[256];

	assert_int_equal(kf_write(f->dfd, &f->rec, f->kek), 0);
	size_t n = slurp(f, "db-master.v1.key", buf, sizeof(buf));
	for (size_t len = 0; len < n; len++) {
		put(f, "db-master.v1.key", buf, len);
		snprintf(why, sizeof(why), "cut at %zu of %zu", len, n);
		expect_refused(f, "db-master.v1.key", why);
	}
	/* Extended by a byte: also refused. */
	buf[n] = 0;
	put(f, "db-master.v1.key", buf, n + 1);
	expect_refused(f, "db-master.v1.key", "one byte more");
	/* And the reason for a cut file says so. */
	put(f, "db-master.v1.key", buf, n - 1);
	struct kf_record got;
	assert_int_equal(kf_read(f->dfd, "db-master.v1.key", f->kek, &got, why,
				 sizeof(why)),
			 -EBADMSG);
	assert_non_null(strstr(why, "truncated"));
}

static void test_bit_flips(void **state)
{
	struct fx *f = *state;
	uint8_t buf[KF_FILE_MAX];
	char what[64];

	assert_int_equal(kf_write(f->dfd, &f->rec, f->kek), 0);
	size_t n = slurp(f, "db-master.v1.key", buf, sizeof(buf));
	for (size_t bit = 0; bit < 8 * n; bit++) {
		buf[bit / 8] ^= (uint8_t)(1u << bit % 8);
		put(f, "db-master.v1.key", buf, n);
		snprintf(what, sizeof(what), "bit %zu flipped", bit);
		expect_refused(f, "db-master.v1.key", what);
		buf[bit / 8] ^= (uint8_t)(1u << bit % 8);
	}
	put(f, "db-master.v1.key", buf, n);
	struct kf_record got;
	assert_int_equal(
		kf_read(f->dfd, "db-master.v1.key", f->kek, &got, NULL, 0), 0);
	kf_record_fini(&got);
}

static void test_wrong_kek_and_name(void **state)
{
	struct fx *f = *state;
	uint8_t buf[KF_FILE_MAX], kek2[KF_KEK_LEN];
	struct kf_record got;
	char why[256];

	assert_int_equal(kf_write(f->dfd, &f->rec, f->kek), 0);
	memcpy(kek2, f->kek, sizeof(kek2));
	kek2[0] ^= 0x80;
	assert_int_equal(kf_read(f->dfd, "db-master.v1.key", kek2, &got, why,
				 sizeof(why)),
			 -EBADMSG);
	assert_non_null(strstr(why, "key-encryption key"));
	assert_null(got.secret);

	/* The same bytes under another key's name. */
	size_t n = slurp(f, "db-master.v1.key", buf, sizeof(buf));
	put(f, "other.key", buf, n);
	assert_int_equal(
		kf_read(f->dfd, "other.key", f->kek, &got, why, sizeof(why)),
		-EBADMSG);
	assert_non_null(strstr(why, "db-master.v1"));
	put(f, "db-master.v.key", buf, n);
	assert_int_equal(kf_read(f->dfd, "db-master.v.key", f->kek, &got, why,
				 sizeof(why)),
			 -EBADMSG);
	assert_int_equal(
		kf_read(f->dfd, "missing.key", f->kek, &got, why, sizeof(why)),
		-ENOENT);
	/* A symlink is not followed. */
	assert_int_equal(symlinkat("db-master.v1.key", f->dfd, "link.key"), 0);
	assert_int_equal(
		kf_read(f->dfd, "link.key", f->kek, &got, why, sizeof(why)),
		-ELOOP);
}

static void test_stale_temp(void **state)
{
	struct fx *f = *state;
	struct kf_record got;

	/* A crash between create and rename left junk in the temp file. */
	put(f, ".db-master.v1.tmp", (const uint8_t *)"junk", 4);
	assert_int_equal(kf_write(f->dfd, &f->rec, f->kek), 0);
	assert_int_equal(
		kf_read(f->dfd, "db-master.v1.key", f->kek, &got, NULL, 0), 0);
	assert_memory_equal(got.v[2].key, f->keys[2], 32);
	kf_record_fini(&got);
	/* Delete, then it is gone. */
	assert_int_equal(kf_delete(f->dfd, "db-master.v1"), 0);
	assert_int_equal(
		kf_read(f->dfd, "db-master.v1.key", f->kek, &got, NULL, 0),
		-ENOENT);
	assert_int_equal(kf_delete(f->dfd, "db-master.v1"), -ENOENT);
	assert_int_equal(kf_delete(f->dfd, "../x"), -EINVAL);
}

static void test_bad_records(void **state)
{
	struct fx *f = *state;
	struct kf_record r = f->rec;

	strcpy(r.name, "../etc");
	assert_int_equal(kf_write(f->dfd, &r, f->kek), -EINVAL);
	r = f->rec;
	r.key_len = 0;
	assert_int_equal(kf_write(f->dfd, &r, f->kek), -EINVAL);
	r = f->rec;
	r.v[1].version = r.v[0].version;
	assert_int_equal(kf_write(f->dfd, &r, f->kek), -EINVAL);
	r = f->rec;
	r.nversions = 0;
	assert_int_equal(kf_write(f->dfd, &r, f->kek), -EINVAL);
	r = f->rec;
	r.usage = 0x80;
	assert_int_equal(kf_write(f->dfd, &r, f->kek), -EINVAL);
	r = f->rec;
	r.nuids = KF_MAX_IDS + 1;
	assert_int_equal(kf_write(f->dfd, &r, f->kek), -EINVAL);

	assert_true(kf_name_ok("a"));
	assert_true(kf_name_ok("A-b_c.9"));
	assert_false(kf_name_ok(""));
	assert_false(kf_name_ok(".hidden"));
	assert_false(kf_name_ok("-x"));
	assert_false(kf_name_ok("a/b"));
	assert_false(kf_name_ok("a b"));
	char longname[KF_NAME_MAX + 2];
	memset(longname, 'x', sizeof(longname));
	longname[KF_NAME_MAX] = '\0';
	assert_true(kf_name_ok(longname));
	longname[KF_NAME_MAX] = 'x';
	longname[KF_NAME_MAX + 1] = '\0';
	assert_false(kf_name_ok(longname));

	/* The largest record round-trips. */
	static uint8_t big[KF_MAX_VERSIONS][KF_KEY_MAX];
	r = f->rec;
	memcpy(r.name, longname, KF_NAME_MAX);
	r.name[KF_NAME_MAX] = '\0';
	r.key_len = KF_KEY_MAX;
	r.nuids = r.ngids = KF_MAX_IDS;
	r.nversions = KF_MAX_VERSIONS;
	for (int v = 0; v < KF_MAX_VERSIONS; v++) {
		memset(big[v], 0xa0 + v, KF_KEY_MAX);
		r.v[v].version = (uint32_t)v + 1;
		r.v[v].key = big[v];
	}
	assert_int_equal(kf_write(f->dfd, &r, f->kek), 0);
	char file[KF_NAME_MAX + 8];
	snprintf(file, sizeof(file), "%s.key", r.name);
	struct kf_record got;
	assert_int_equal(kf_read(f->dfd, file, f->kek, &got, NULL, 0), 0);
	assert_int_equal(got.nversions, KF_MAX_VERSIONS);
	assert_memory_equal(got.v[15].key, big[15], KF_KEY_MAX);
	kf_record_fini(&got);
}

static void kek_file(struct fx *f, const char *content, size_t n, mode_t mode)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/kek", f->dir);
	unlink(p);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, n), (ssize_t)n);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void test_kek(void **state)
{
	struct fx *f = *state;
	char p[128], why[256];
	uint8_t kek[KF_KEK_LEN], want[KF_KEK_LEN];
	char hex[2 * KF_KEK_LEN + 2];
	uid_t me = geteuid();

	snprintf(p, sizeof(p), "%s/kek", f->dir);
	for (int i = 0; i < KF_KEK_LEN; i++) {
		want[i] = (uint8_t)(0xf0 - 3 * i);
		sprintf(hex + 2 * i, "%02x", want[i]);
	}
	kek_file(f, (const char *)want, KF_KEK_LEN, 0400);
	assert_int_equal(kf_kek_read(p, me, 0, kek, why, sizeof(why)), 0);
	assert_memory_equal(kek, want, KF_KEK_LEN);

	memset(kek, 0, sizeof(kek));
	kek_file(f, hex, 2 * KF_KEK_LEN, 0600);
	assert_int_equal(kf_kek_read(p, me, 0, kek, why, sizeof(why)), 0);
	assert_memory_equal(kek, want, KF_KEK_LEN);
	hex[2 * KF_KEK_LEN] = '\n';
	kek_file(f, hex, 2 * KF_KEK_LEN + 1, 0600);
	assert_int_equal(kf_kek_read(p, me, 0, kek, why, sizeof(why)), 0);
	assert_memory_equal(kek, want, KF_KEK_LEN);

	/* Wrong sizes and a non-hex digit. */
	kek_file(f, (const char *)want, KF_KEK_LEN - 1, 0400);
	assert_int_equal(kf_kek_read(p, me, 0, kek, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "31 bytes"));
	hex[5] = 'g';
	kek_file(f, hex, 2 * KF_KEK_LEN, 0400);
	assert_int_equal(kf_kek_read(p, me, 0, kek, why, sizeof(why)), -EINVAL);

	/* Modes and owner. */
	kek_file(f, (const char *)want, KF_KEK_LEN, 0440);
	assert_int_equal(kf_kek_read(p, me, 0, kek, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "0440"));
	kek_file(f, (const char *)want, KF_KEK_LEN, 0604);
	assert_int_equal(kf_kek_read(p, me, 0, kek, why, sizeof(why)), -EPERM);
	kek_file(f, (const char *)want, KF_KEK_LEN, 0620);
	assert_int_equal(kf_kek_read(p, me, 0, kek, why, sizeof(why)), -EPERM);
	/* Neither root's nor the daemon user's: refused. (As root the test
	 * gives the file to another uid; else the file is ours and the
	 * daemon's user another.) */
	kek_file(f, (const char *)want, KF_KEK_LEN, 0400);
	uid_t daemon_user = me + 1;
	if (me == 0) {
		assert_int_equal(chown(p, 12345, (gid_t)-1), 0);
		daemon_user = 54321;
	}
	assert_int_equal(kf_kek_read(p, daemon_user, 0, kek, why, sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "owned by uid"));
	/* Root's file, read by a daemon of another user: allowed. */
	if (me == 0) {
		assert_int_equal(chown(p, 0, (gid_t)-1), 0);
		assert_int_equal(
			kf_kek_read(p, 54321, 0, kek, why, sizeof(why)), 0);
	}

	/* A systemd credential: root's 0440 (the ACL's mask) is fine, as is
	 * the service user's 0400; others' bits never. */
	kek_file(f, (const char *)want, KF_KEK_LEN, 0440);
	if (me == 0)
		assert_int_equal(kf_kek_read(p, 4242, 1, kek, why, sizeof(why)),
				 0);
	assert_int_equal(kf_kek_read(p, me, 1, kek, why, sizeof(why)), 0);
	kek_file(f, (const char *)want, KF_KEK_LEN, 0404);
	assert_int_equal(kf_kek_read(p, me, 1, kek, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "others"));
	if (me != 0)
		assert_int_equal(
			kf_kek_read(p, me + 1, 1, kek, why, sizeof(why)),
			-EPERM);
	snprintf(p, sizeof(p), "%s", f->dir);
	assert_int_equal(kf_kek_read(p, me, 0, kek, why, sizeof(why)), -EINVAL);
	snprintf(p, sizeof(p), "%s/none", f->dir);
	assert_int_equal(kf_kek_read(p, me, 0, kek, why, sizeof(why)), -ENOENT);
}

/* The record parser alone: a minimal record, then every way of breaking
 * one field of it. */
static void test_record_parse(void **state)
{
	uint8_t good[] = {
		1, 'k',			      /* name */
		0, 1,	0, 32,		      /* alg 1, 32-byte key */
		0, 0,	0, 3,		      /* usage */
		0,			      /* exportable */
		1, 0,	0, 3,  0xe8,	      /* one uid: 1000 */
		0,			      /* no gids */
		1,			      /* one version */
		0, 0,	0, 1,		      /* version 1 */
		0, 0,	0, 0,  0,    0, 0, 9, /* created 9 */
	};
	uint8_t buf[sizeof(good) + 33];
	struct kf_record r;
	char why[128];

	memcpy(buf, good, sizeof(good));
	memset(buf + sizeof(good), 0xab, 32);
	size_t n = sizeof(good) + 32;
	assert_int_equal(kf_record_parse(buf, n, &r, why, sizeof(why)), 0);
	assert_string_equal(r.name, "k");
	assert_int_equal(r.uids[0], 1000);
	assert_int_equal(r.v[0].created, 9);
	assert_ptr_equal(r.v[0].key, buf + sizeof(good));

	/* One byte short, one byte more. */
	assert_int_equal(kf_record_parse(buf, n - 1, &r, why, sizeof(why)),
			 -EBADMSG);
	assert_non_null(strstr(why, "short"));
	buf[n] = 0;
	assert_int_equal(kf_record_parse(buf, n + 1, &r, why, sizeof(why)),
			 -EBADMSG);
	assert_non_null(strstr(why, "trailing"));
	/* Field by field: a bad name, counts past the bounds, no usage, a
	 * zero-length key, exportable 2, no versions. */
	static const struct {
		size_t off;
		uint8_t v;
	} bad[] = { { 1, '.' },	 { 0, 0 },  { 0, 200 }, { 9, 0 },
		    { 9, 0x83 }, { 5, 0 },  { 10, 2 },	{ 11, 17 },
		    { 16, 17 },	 { 17, 0 }, { 17, 17 } };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(buf, good, sizeof(good));
		buf[bad[i].off] = bad[i].v;
		why[0] = '\0';
		assert_int_equal(kf_record_parse(buf, n, &r, why, sizeof(why)),
				 -EBADMSG);
		assert_true(why[0] != '\0');
		assert_int_equal(r.nversions, 0);
	}
}

/* The kernel keyring: a "user" key in this process's keyring. Skipped
 * where a seccomp profile refuses keyctl (containers). */
static void test_kek_keyring(void **state)
{
	uint8_t want[KF_KEK_LEN], kek[KF_KEK_LEN];
	char desc[64], why[256], hex[2 * KF_KEK_LEN + 2];

	for (int i = 0; i < KF_KEK_LEN; i++) {
		want[i] = (uint8_t)(0x11 * i + 3);
		sprintf(hex + 2 * i, "%02x", want[i]);
	}
	snprintf(desc, sizeof(desc), "cryptod-test-kek-%d", (int)getpid());
	long id = syscall(SYS_add_key, "user", desc, want, KF_KEK_LEN,
			  KEY_SPEC_PROCESS_KEYRING);
	if (id < 0)
		skip();
	assert_int_equal(kf_kek_keyring(desc, kek, why, sizeof(why)), 0);
	assert_memory_equal(kek, want, KF_KEK_LEN);
	/* Hex with a newline, as keyctl padd from a file gives it. */
	hex[2 * KF_KEK_LEN] = '\n';
	assert_true(syscall(SYS_add_key, "user", desc, hex, 2 * KF_KEK_LEN + 1,
			    KEY_SPEC_PROCESS_KEYRING) == id);
	memset(kek, 0, sizeof(kek));
	assert_int_equal(kf_kek_keyring(desc, kek, why, sizeof(why)), 0);
	assert_memory_equal(kek, want, KF_KEK_LEN);
	/* A payload of the wrong size. */
	assert_true(syscall(SYS_add_key, "user", desc, want, 16,
			    KEY_SPEC_PROCESS_KEYRING) == id);
	assert_int_equal(kf_kek_keyring(desc, kek, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "16 bytes"));
	/* Gone. */
	assert_int_equal(syscall(SYS_keyctl, KEYCTL_INVALIDATE, id), 0);
	assert_int_equal(kf_kek_keyring(desc, kek, why, sizeof(why)), -ENOKEY);
	assert_non_null(strstr(why, "no \"user\" key"));
	assert_int_equal(
		kf_kek_keyring("cryptod-no-such-key", kek, why, sizeof(why)),
		-ENOKEY);
}

/*
 * A key file as the daemon wrote them before key pairs widened the
 * bounds (format 1, written by that code, KEK 0xa0..0xbf): it still
 * loads, byte for byte. The format did not change: a key pair is one
 * more algorithm whose key bytes are its DER in a fixed slot.
 */
static const uint8_t v1_fixture[] = {
	0x43, 0x52, 0x59, 0x50, 0x54, 0x4f, 0x44, 0x4b, 0x00, 0x01, 0x00, 0x20,
	0x00, 0x00, 0x00, 0x77, 0x2a, 0x19, 0x5a, 0xd9, 0xe5, 0xfd, 0xda, 0x54,
	0xc4, 0x7a, 0x84, 0x89, 0x00, 0x00, 0x00, 0x00, 0x75, 0x08, 0xc7, 0xbd,
	0xac, 0xf6, 0x68, 0xee, 0x52, 0x26, 0x10, 0xf3, 0x7a, 0x11, 0x41, 0x97,
	0xd1, 0x26, 0xd5, 0x13, 0xe7, 0xbb, 0x54, 0xee, 0x39, 0x00, 0x6c, 0x58,
	0x38, 0x48, 0x7d, 0xe4, 0x27, 0x9d, 0x2d, 0xd1, 0xa1, 0x6c, 0x6b, 0x00,
	0x50, 0x10, 0x56, 0x7c, 0x9f, 0xe7, 0x47, 0x02, 0xb9, 0xbf, 0xab, 0xd0,
	0x38, 0x92, 0x0d, 0x72, 0x2c, 0x3d, 0x64, 0xb3, 0x35, 0x54, 0x63, 0x88,
	0x8d, 0x5e, 0x00, 0xfd, 0x69, 0xa6, 0xbb, 0x67, 0x52, 0x44, 0x7f, 0xd3,
	0x38, 0xde, 0xde, 0xc4, 0xeb, 0xbb, 0x97, 0xc7, 0x6a, 0x2c, 0x8b, 0x6a,
	0x02, 0x6b, 0x5a, 0x76, 0x50, 0x3b, 0x22, 0x77, 0x4f, 0x90, 0x7e, 0x9d,
	0x3d, 0x76, 0x96, 0x23, 0x14, 0x02, 0xd0, 0x9d, 0xa6, 0x56, 0x25, 0xf4,
	0xe1, 0xc8, 0x56, 0x53, 0xd7, 0x02, 0x38, 0xb3, 0xfc, 0x44, 0x73, 0x3b,
	0x6d, 0x31, 0xbe, 0x36, 0xf6, 0xb1, 0x0b, 0x85, 0x2c, 0x74, 0x4a,
};

static void test_v1_fixture(void **state)
{
	struct fx *f = *state;
	struct kf_record got;
	uint8_t kek[32];
	char why[256] = "";

	for (int i = 0; i < 32; i++)
		kek[i] = (uint8_t)(0xa0 + i);
	put(f, "v1-fixture.key", v1_fixture, sizeof(v1_fixture));
	assert_int_equal(
		kf_read(f->dfd, "v1-fixture.key", kek, &got, why, sizeof(why)),
		0);
	assert_string_equal(got.name, "v1-fixture");
	assert_int_equal(got.alg, 1);
	assert_int_equal(got.key_len, 32);
	assert_int_equal(got.usage, KF_USE_ENCRYPT | KF_USE_DECRYPT);
	assert_int_equal(got.exportable, 1);
	assert_int_equal(got.nuids, 1);
	assert_int_equal(got.uids[0], 1000);
	assert_int_equal(got.ngids, 1);
	assert_int_equal(got.gids[0], 27);
	assert_int_equal(got.nversions, 2);
	assert_int_equal(got.v[0].version, 1);
	assert_int_equal(got.v[1].version, 2);
	assert_int_equal(got.v[1].created, 1764896400u);
	for (int i = 0; i < 32; i++) {
		assert_int_equal(got.v[0].key[i], i);
		assert_int_equal(got.v[1].key[i], 0x40 + i);
	}
	kf_record_fini(&got);
}

/* A key pair's record: its slot (kf_pk_slot_len) may exceed KF_KEY_MAX, a
 * cipher's may not; 16 versions of the largest slot fit. */
static void test_pkey_record(void **state)
{
	struct fx *f = *state;
	static uint8_t big[KF_MAX_VERSIONS][KF_PKEY_MAX];
	struct kf_record r = f->rec, got;
	char why[256] = "";

	assert_int_equal(kf_key_max(CRD_ALG_RSA_4096), KF_PKEY_MAX);
	assert_true(kf_key_max(CRD_ALG_EC_P521) < KF_PKEY_MAX);
	assert_int_equal(kf_key_max(CRD_ALG_AES_GCM), KF_KEY_MAX);
	r.alg = CRD_ALG_RSA_4096;
	r.key_len = KF_PKEY_MAX;
	r.usage = KF_USE_SIGN | KF_USE_VERIFY | KF_USE_DECRYPT;
	r.nversions = KF_MAX_VERSIONS;
	for (int v = 0; v < KF_MAX_VERSIONS; v++) {
		memset(big[v], 0x30 + v, KF_PKEY_MAX);
		r.v[v].version = (uint32_t)v + 1;
		r.v[v].key = big[v];
	}
	assert_int_equal(kf_write(f->dfd, &r, f->kek), 0);
	assert_int_equal(kf_read(f->dfd, "db-master.v1.key", f->kek, &got, why,
				 sizeof(why)),
			 0);
	assert_int_equal(got.key_len, KF_PKEY_MAX);
	assert_int_equal(got.usage, r.usage);
	assert_memory_equal(got.v[15].key, big[15], KF_PKEY_MAX);
	kf_record_fini(&got);
	/* The same length for a cipher's key is refused. */
	r.alg = CRD_ALG_AES_GCM;
	r.usage = KF_USE_ENCRYPT | KF_USE_DECRYPT;
	assert_int_equal(kf_write(f->dfd, &r, f->kek), -EINVAL);
	r.alg = CRD_ALG_RSA_4096;
	r.key_len = KF_PKEY_MAX + 1;
	assert_int_equal(kf_write(f->dfd, &r, f->kek), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_truncated, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_bit_flips, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_wrong_kek_and_name,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stale_temp, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_bad_records, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_kek, fx_setup,
						fx_teardown),
		cmocka_unit_test(test_kek_keyring),
		cmocka_unit_test_setup_teardown(test_v1_fixture, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_pkey_record, fx_setup,
						fx_teardown),
		cmocka_unit_test(test_record_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
