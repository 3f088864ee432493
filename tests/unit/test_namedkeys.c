/* SPDX-License-Identifier: MIT */
/*
 * The named-key registry (daemon/keys/namedkeys.c): create and import, the
 * ACL and usage rules, rotation (old versions by number, the oldest
 * retired), export by RFC 5649 wrap and import of the wrap, delete with a
 * session still holding the key, persistence through nk_fini/nk_init, and
 * a directory with bad files: each refused with its name and reason, the
 * rest loaded, a stale temp file removed; a key pair's DER in its slot.
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
#include <unistd.h>

#include <cryptod/ring_abi.h>

#include "keywrap.h"
#include "log.h"
#include "namedkeys.h"
#include "pkeys.h"

static char dir[64];
static uint8_t kek[KF_KEK_LEN];
static const uint32_t uids[] = { 1000, 1001 };
static const uint32_t gids[] = { 50 };

static int setup(void **state)
{
	log_init(LOG_ERR_);
	strcpy(dir, "/tmp/test_namedkeys.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	for (int i = 0; i < KF_KEK_LEN; i++)
		kek[i] = (uint8_t)(7 * i + 1);
	return nk_init(dir, kek) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	nk_fini();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct nk_spec spec(const char *name, uint32_t usage, int exportable)
{
	struct nk_spec s = {
		.name = name,
		.alg = CRD_ALG_AES_GCM,
		.key_len = 32,
		.usage = usage,
		.exportable = (uint8_t)exportable,
		.nuids = 2,
		.uids = uids,
		.ngids = 1,
		.gids = gids,
	};
	return s;
}

/* Open as uid 1000 for want; the key bytes, or the error. */
static int open_as(const char *name, uint32_t version, uid_t uid, gid_t gid,
		   uint32_t want, uint8_t *key, uint32_t *ver)
{
	uint16_t len, alg;
	uint32_t v;
	struct nk_key *ref;
	int err = nk_open(name, version, uid, gid, NULL, 0, want, key, &len,
			  &alg, ver ? ver : &v, &ref);
	if (!err)
		nk_close(ref);
	return err;
}

static void test_create_acl(void **state)
{
	struct nk_spec s = spec("k1", KF_USE_ENCRYPT | KF_USE_DECRYPT, 0);
	uint8_t a[KF_KEY_MAX], b[KF_KEY_MAX];
	gid_t sup[2] = { 7, 50 };
	uint16_t len, alg;
	uint32_t v;
	struct nk_key *ref;

	assert_int_equal(nk_create(&s), 0);
	assert_int_equal(nk_create(&s), -EEXIST);
	assert_int_equal(nk_count(), 1);
	assert_int_equal(open_as("k1", 0, 1000, 100, KF_USE_ENCRYPT, a, &v), 0);
	assert_int_equal(v, 1);
	/* The same bytes each time, and not all zero (random). */
	assert_int_equal(open_as("k1", 0, 1001, 100, KF_USE_DECRYPT, b, NULL),
			 0);
	assert_memory_equal(a, b, 32);
	memset(b, 0, 32);
	assert_memory_not_equal(a, b, 32);
	/* By primary gid and by a supplementary group. */
	assert_int_equal(open_as("k1", 0, 2000, 50, KF_USE_ENCRYPT, b, NULL),
			 0);
	assert_int_equal(nk_open("k1", 0, 2000, 100, sup, 2, KF_USE_ENCRYPT, b,
				 &len, &alg, &v, &ref),
			 0);
	assert_int_equal(len, 32);
	assert_int_equal(alg, CRD_ALG_AES_GCM);
	nk_close(ref);
	/* Strangers, wrong usages, unknown names and versions. */
	assert_int_equal(open_as("k1", 0, 2000, 100, KF_USE_ENCRYPT, b, NULL),
			 -EACCES);
	assert_int_equal(nk_open("k1", 0, 2000, 100, sup, 1, KF_USE_ENCRYPT, b,
				 &len, &alg, &v, &ref),
			 -EACCES);
	assert_int_equal(
		open_as("k1", 0, 1000, 100, KF_USE_MAC_GENERATE, b, NULL),
		-EPERM);
	assert_int_equal(open_as("k1", 0, 1000, 100,
				 KF_USE_ENCRYPT | KF_USE_MAC_VERIFY, b, NULL),
			 -EPERM);
	assert_int_equal(open_as("k1", 0, 1000, 100, 0, b, NULL), -EPERM);
	assert_int_equal(open_as("k1", 2, 1000, 100, KF_USE_ENCRYPT, b, NULL),
			 -ENOENT);
	assert_int_equal(open_as("nope", 0, 1000, 100, KF_USE_ENCRYPT, b, NULL),
			 -ENOENT);
	assert_true(nk_allowed("k1", 1001, 1, NULL, 0));
	assert_false(nk_allowed("k1", 1002, 1, NULL, 0));
	assert_false(nk_allowed("nope", 1000, 1, NULL, 0));

	/* Info: facts only. */
	struct nk_info in;
	assert_int_equal(nk_info("k1", &in), 0);
	assert_string_equal(in.name, "k1");
	assert_int_equal(in.nversions, 1);
	assert_int_equal(in.versions[0], 1);
	assert_int_equal(in.exportable, 0);
	assert_int_equal(in.nuids, 2);
	assert_string_equal(nk_name_at(0), "k1");
	assert_null(nk_name_at(1));
	assert_int_equal(nk_info("nope", &in), -ENOENT);

	/* Bad specs. */
	struct nk_spec bad = s;
	bad.name = "k2";
	bad.alg = CRD_ALG_SHA256; /* takes no key */
	assert_int_equal(nk_create(&bad), -EINVAL);
	bad.alg = CRD_ALG_AES_CBC_HMAC_SHA1; /* takes two */
	assert_int_equal(nk_create(&bad), -EINVAL);
	bad = s;
	bad.name = "../k2";
	assert_int_equal(nk_create(&bad), -EINVAL);
	bad = s;
	bad.name = "k2";
	bad.usage = 0;
	assert_int_equal(nk_create(&bad), -EINVAL);
	bad.usage = KF_USE_ENCRYPT;
	bad.key_len = KF_KEY_MAX + 1;
	assert_int_equal(nk_create(&bad), -EINVAL);
	bad.key_len = 32;
	assert_int_equal(nk_import(&bad, a, 16), -EINVAL);
	assert_int_equal(nk_count(), 1);
}

static void test_import_counters(void **state)
{
	struct nk_spec s = spec("imp", KF_USE_ENCRYPT, 0);
	uint8_t key[32], got[KF_KEY_MAX];
	uint16_t len, alg;
	uint32_t v;
	struct nk_key *ref;

	memset(key, 0x3c, sizeof(key));
	assert_int_equal(nk_import(&s, key, 32), 0);
	assert_int_equal(nk_open("imp", 0, 1000, 1, NULL, 0, KF_USE_ENCRYPT,
				 got, &len, &alg, &v, &ref),
			 0);
	assert_memory_equal(got, key, 32);
	nk_account(ref, 3, 4096);
	nk_account(ref, 1, 10);
	struct nk_info in;
	assert_int_equal(nk_info("imp", &in), 0);
	assert_int_equal(in.ops, 4);
	assert_int_equal(in.bytes, 4106);
	assert_true(in.last_use > 0);
	/* Delete while the session holds it: gone by name at once, the
	 * session's reference still valid until it closes. */
	assert_int_equal(nk_delete("imp"), 0);
	assert_int_equal(nk_delete("imp"), -ENOENT);
	assert_int_equal(nk_info("imp", &in), -ENOENT);
	nk_account(ref, 1, 1);
	nk_close(ref);
	char p[128];
	snprintf(p, sizeof(p), "%s/imp.key", dir);
	assert_int_equal(access(p, F_OK), -1);
	/* The name is free again. */
	assert_int_equal(nk_import(&s, key, 32), 0);
}

static void test_rotate(void **state)
{
	struct nk_spec s = spec("rot", KF_USE_ENCRYPT | KF_USE_DECRYPT, 0);
	uint8_t v1[KF_KEY_MAX], k[KF_KEY_MAX], k2[KF_KEY_MAX];
	uint32_t ver;

	assert_int_equal(nk_create(&s), 0);
	assert_int_equal(open_as("rot", 0, 1000, 1, KF_USE_ENCRYPT, v1, &ver),
			 0);
	assert_int_equal(nk_rotate("rot"), 2);
	assert_int_equal(open_as("rot", 0, 1000, 1, KF_USE_ENCRYPT, k, &ver),
			 0);
	assert_int_equal(ver, 2);
	assert_memory_not_equal(k, v1, 32);
	/* The old version by number, the same bytes as before. */
	assert_int_equal(open_as("rot", 1, 1000, 1, KF_USE_DECRYPT, k2, &ver),
			 0);
	assert_int_equal(ver, 1);
	assert_memory_equal(k2, v1, 32);
	/* Fill to the limit: the oldest is retired. */
	for (int i = 3; i <= KF_MAX_VERSIONS + 1; i++)
		assert_int_equal(nk_rotate("rot"), i);
	struct nk_info in;
	assert_int_equal(nk_info("rot", &in), 0);
	assert_int_equal(in.nversions, KF_MAX_VERSIONS);
	assert_int_equal(in.versions[0], 2);
	assert_int_equal(in.versions[KF_MAX_VERSIONS - 1], KF_MAX_VERSIONS + 1);
	assert_int_equal(open_as("rot", 1, 1000, 1, KF_USE_DECRYPT, k2, NULL),
			 -ENOENT);
	assert_int_equal(open_as("rot", 2, 1000, 1, KF_USE_DECRYPT, k2, NULL),
			 0);
	assert_memory_equal(k2, k, 32);
	assert_int_equal(nk_rotate("nope"), -ENOENT);
}

static void test_wrap(void **state)
{
	struct nk_spec s = spec("exp", KF_USE_ENCRYPT, 1);
	struct nk_spec ns = spec("noexp", KF_USE_ENCRYPT, 0);
	uint8_t wkek[24], blob[KF_KEY_MAX + 16], key[KF_KEY_MAX],
		plain[KF_KEY_MAX];

	memset(wkek, 0x61, sizeof(wkek));
	assert_int_equal(nk_create(&s), 0);
	assert_int_equal(nk_create(&ns), 0);
	assert_int_equal(nk_wrap("noexp", 0, wkek, 24, blob, sizeof(blob)),
			 -EPERM);
	assert_int_equal(nk_wrap("nope", 0, wkek, 24, blob, sizeof(blob)),
			 -ENOENT);
	assert_int_equal(nk_wrap("exp", 9, wkek, 24, blob, sizeof(blob)),
			 -ENOENT);
	int n = nk_wrap("exp", 0, wkek, 24, blob, sizeof(blob));
	assert_int_equal(n, 40);
	/* The wrap is RFC 5649 of the key's bytes. */
	assert_int_equal(open_as("exp", 0, 1000, 1, KF_USE_ENCRYPT, key, NULL),
			 0);
	assert_int_equal(
		kwp_unwrap(wkek, 24, blob, (size_t)n, plain, sizeof(plain)),
		32);
	assert_memory_equal(plain, key, 32);
	/* Imported elsewhere under another name (an unwrap is an import of
	 * what kwp_unwrap gives: keyreq.c): the same key. */
	struct nk_spec is = spec("moved", KF_USE_ENCRYPT, 0);
	assert_int_equal(nk_import(&is, plain, 32), 0);
	explicit_bzero(plain, sizeof(plain));
	assert_int_equal(
		open_as("moved", 0, 1000, 1, KF_USE_ENCRYPT, plain, NULL), 0);
	assert_memory_equal(plain, key, 32);
	/* The registry refuses bytes of another length than the spec's. */
	is.name = "moved2";
	assert_int_equal(nk_import(&is, plain, 16), -EINVAL);
	struct nk_info in;
	assert_int_equal(nk_info("moved2", &in), -ENOENT);
}

static void test_persist(void **state)
{
	struct nk_spec s = spec("p1", KF_USE_ENCRYPT | KF_USE_DECRYPT, 1);
	uint8_t a1[KF_KEY_MAX], a2[KF_KEY_MAX], b[KF_KEY_MAX];
	uint32_t ver;

	assert_int_equal(nk_create(&s), 0);
	assert_int_equal(nk_rotate("p1"), 2);
	s.name = "p2";
	s.alg = CRD_ALG_HMAC_SHA256;
	s.key_len = 64;
	s.usage = KF_USE_MAC_GENERATE;
	assert_int_equal(nk_create(&s), 0);
	assert_int_equal(open_as("p1", 1, 1000, 1, KF_USE_DECRYPT, a1, NULL),
			 0);
	assert_int_equal(open_as("p1", 2, 1000, 1, KF_USE_DECRYPT, a2, NULL),
			 0);

	/* A restart: everything comes back, byte for byte. */
	nk_fini();
	assert_int_equal(nk_count(), 0);
	assert_int_equal(nk_init(dir, kek), 2);
	assert_int_equal(open_as("p1", 0, 1000, 1, KF_USE_ENCRYPT, b, &ver), 0);
	assert_int_equal(ver, 2);
	assert_memory_equal(b, a2, 32);
	assert_int_equal(open_as("p1", 1, 1000, 1, KF_USE_DECRYPT, b, &ver), 0);
	assert_memory_equal(b, a1, 32);
	struct nk_info in;
	assert_int_equal(nk_info("p2", &in), 0);
	assert_int_equal(in.alg, CRD_ALG_HMAC_SHA256);
	assert_int_equal(in.key_len, 64);
	assert_int_equal(in.usage, KF_USE_MAC_GENERATE);
	assert_int_equal(in.exportable, 1);

	/* Under another KEK nothing loads. */
	nk_fini();
	uint8_t kek2[KF_KEK_LEN];
	memcpy(kek2, kek, sizeof(kek2));
	kek2[5] ^= 4;
	assert_int_equal(nk_init(dir, kek2), 0);
	nk_fini();
	assert_int_equal(nk_init(dir, kek), 2);
}

static char *slurp_path(const char *p, size_t *n)
{
	static char buf[65536];
	int fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(r >= 0);
	buf[r] = '\0';
	*n = (size_t)r;
	return buf;
}

static void put_path(const char *p, const void *b, size_t n)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, n), (ssize_t)n);
	close(fd);
}

static void test_dir_mode(void **state)
{
	nk_fini();
	assert_int_equal(chmod(dir, 0770), 0);
	assert_int_equal(nk_init(dir, kek), -EPERM);
	assert_int_equal(chmod(dir, 0702), 0);
	assert_int_equal(nk_init(dir, kek), -EPERM);
	assert_int_equal(chmod(dir, 0750), 0); /* readable is fine */
	assert_int_equal(nk_init(dir, kek), 0);
}

static void test_bad_files(void **state)
{
	const char *names[] = { "good1", "cut", "flip", "good2" };
	char p[160], q[160];
	size_t n;

	for (int i = 0; i < 4; i++) {
		struct nk_spec s = spec(names[i], KF_USE_ENCRYPT, 0);
		assert_int_equal(nk_create(&s), 0);
	}
	nk_fini();
	snprintf(p, sizeof(p), "%s/cut.key", dir);
	char *b = slurp_path(p, &n);
	put_path(p, b, n - 7);
	snprintf(p, sizeof(p), "%s/flip.key", dir);
	b = slurp_path(p, &n);
	b[n / 2] ^= 0x10;
	put_path(p, b, n);
	snprintf(p, sizeof(p), "%s/.good1.tmp", dir);
	put_path(p, "half", 4);
	snprintf(p, sizeof(p), "%s/README", dir);
	put_path(p, "x", 1);

	/* The log, to see each refusal named with its reason. */
	snprintf(q, sizeof(q), "%s/.log", dir);
	fflush(stderr);
	int saved = dup(2);
	int lfd = open(q, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && lfd >= 0);
	dup2(lfd, 2);
	close(lfd);
	log_set_level(LOG_WARN_);
	int loaded = nk_init(dir, kek);
	log_set_level(LOG_ERR_);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);

	assert_int_equal(loaded, 2);
	assert_int_equal(nk_count(), 2);
	struct nk_info in;
	assert_int_equal(nk_info("good1", &in), 0);
	assert_int_equal(nk_info("good2", &in), 0);
	assert_int_equal(nk_info("cut", &in), -ENOENT);
	assert_int_equal(nk_info("flip", &in), -ENOENT);
	snprintf(p, sizeof(p), "%s/.good1.tmp", dir);
	assert_int_equal(access(p, F_OK), -1); /* the stale temp removed */
	const char *log = slurp_path(q, &n);
	if (!strstr(log, "cut.key: length mismatch") ||
	    !strstr(log, "flip.key: authentication failed") ||
	    !strstr(log, ".good1.tmp: stale temp file"))
		fail_msg("log lacks a refusal:\n%s", log);
	/* The refused files are left for the operator, not deleted. */
	snprintf(p, sizeof(p), "%s/cut.key", dir);
	assert_int_equal(access(p, F_OK), 0);
	/* Creating over a refused file's name replaces it. */
	struct nk_spec s = spec("cut", KF_USE_ENCRYPT, 0);
	assert_int_equal(nk_create(&s), 0);
}

/*
 * A key pair in the registry: its DER in a slot of its row's size,
 * handed out (open, wrap) without the padding, through a restart; a
 * rotation needs the new pair's bytes; pub is for key pairs only.
 */
static void test_key_pair(void **state)
{
	static uint8_t der[KF_PKEY_MAX], got[KF_PKEY_MAX], pub[KF_PKEY_MAX],
		der2[KF_PKEY_MAX], blob[KF_PKEY_MAX + 16], plain[KW_MAX_INPUT];
	char why[200];
	uint32_t ver;
	(void)state;

	int n = pk_generate(CRD_ALG_EC_P256, der, sizeof(der), why,
			    sizeof(why));
	assert_true(n > 100 && (unsigned)n < kf_pk_slot_len(CRD_ALG_EC_P256));
	assert_int_equal(pk_der_len(der, (size_t)n), n);
	struct nk_spec s = spec("pair", KF_USE_SIGN | KF_USE_DERIVE, 1);
	s.alg = CRD_ALG_EC_P256;
	s.key_len = (uint16_t)kf_pk_slot_len(CRD_ALG_EC_P256);
	/* a pair's bytes must be one whole DER within the slot */
	assert_int_equal(nk_import(&s, der, (size_t)n - 1), -EINVAL);
	assert_int_equal(nk_create(&s), -EINVAL); /* pkeys.c makes pairs */
	assert_int_equal(nk_import(&s, der, (size_t)n), 0);
	assert_int_equal(open_as("pair", 0, 1000, 1, KF_USE_SIGN, got, &ver),
			 0);
	assert_memory_equal(got, der, (size_t)n);
	assert_int_equal(open_as("pair", 0, 1000, 1, KF_USE_VERIFY, got, NULL),
			 -EPERM);
	int pl = nk_pub("pair", 0, pub, sizeof(pub));
	assert_true(pl > 0);
	assert_int_equal(pk_public(der, (size_t)n, got, sizeof(got)), pl);
	assert_memory_equal(got, pub, (size_t)pl);
	int wl = nk_wrap("pair", 0, (const uint8_t *)"0123456789abcdef", 16,
			 blob, sizeof(blob));
	assert_int_equal(kwp_unwrap((const uint8_t *)"0123456789abcdef", 16,
				    blob, (size_t)wl, plain, sizeof(plain)),
			 n);
	assert_memory_equal(plain, der, (size_t)n);

	assert_int_equal(nk_rotate("pair"), -EINVAL); /* random bytes: no */
	int n2 = pk_generate(CRD_ALG_EC_P256, der2, sizeof(der2), why,
			     sizeof(why));
	assert_int_equal(nk_rotate_to("pair", der2, (size_t)n2), 2);
	nk_fini();
	assert_int_equal(nk_init(dir, kek), 1);
	assert_int_equal(open_as("pair", 1, 1000, 1, KF_USE_SIGN, got, NULL),
			 0);
	assert_memory_equal(got, der, (size_t)n);
	assert_int_equal(open_as("pair", 0, 1000, 1, KF_USE_SIGN, got, &ver),
			 0);
	assert_int_equal(ver, 2);
	assert_memory_equal(got, der2, (size_t)n2);

	struct nk_spec a = spec("aes", KF_USE_ENCRYPT | KF_USE_DECRYPT, 0);
	assert_int_equal(nk_create(&a), 0);
	assert_int_equal(nk_pub("aes", 0, pub, sizeof(pub)), -EINVAL);
	/* a cipher key is no longer than KF_KEY_MAX, a pair's slot no
	 * longer than its row's */
	a.name = "long";
	a.key_len = KF_KEY_MAX + 1;
	assert_int_equal(nk_create(&a), -EINVAL);
	s.name = "big";
	s.key_len = (uint16_t)(kf_pk_slot_len(CRD_ALG_EC_P256) + 1);
	assert_int_equal(nk_import(&s, der, (size_t)n), -EINVAL);
	explicit_bzero(der, sizeof(der));
	explicit_bzero(der2, sizeof(der2));
	explicit_bzero(got, sizeof(got));
	explicit_bzero(plain, sizeof(plain));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_create_acl), T(test_import_counters), T(test_rotate),
		T(test_wrap),	    T(test_persist),	     T(test_bad_files),
		T(test_dir_mode),   T(test_key_pair),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
