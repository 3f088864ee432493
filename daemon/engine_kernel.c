/* SPDX-License-Identifier: MIT */
/*
 * kernel and kernel-pcrypt: the Linux kernel crypto API through AF_ALG
 * sockets, by way of libkcapi.
 *
 * A session is one AF_ALG transform (the tfm socket, which holds the key
 * inside the kernel) bound by driver name, so "kernel" never lands on a
 * pcrypt instance by priority and "kernel-pcrypt" always does. Each worker
 * gets its own operation socket on that transform the first time it runs
 * one of the session's ops (kcapi_handle_reinit): workers never share a
 * socket, so with N workers N requests are in flight, which is what lets
 * pcrypt spread them over its CPUs.
 *
 * Data is copied into a per-worker scratch buffer (AAD || data || tag, the
 * layout AF_ALG wants) and the result copied out: the kernel never reads
 * the client's shared memory, so a client rewriting it meanwhile can only
 * spoil its own result, and a failed tag check leaves nothing behind. The
 * scratch is wiped after every op.
 *
 * Ops are limited to KERN_MAX_LEN bytes (libkcapi's one-shot AEAD limit,
 * 16 pages): AEAD and XTS/LRW cannot be split across socket calls.
 */
#include "engine.h"
#include "bounds.h"
#include "kproc.h"
#include "log.h"
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/cryptouser.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <kcapi.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
/* From the kernel's include/linux/crypto.h, which is not uapi. */
#ifndef CRYPTO_ALG_TYPE_MASK
#define CRYPTO_ALG_TYPE_MASK 0x0000000f
#define CRYPTO_ALG_TYPE_AEAD 0x00000003
#endif

enum {
	KERN_MAX_LEN = 65536,
	KERN_TAG_MAX = 16,
	/* AAD || data || tag, for input and output each */
	KERN_SCRATCH = CRD_AAD_MAX + 1 + KERN_MAX_LEN + KERN_TAG_MAX,
	KERN_WHY = 192,
};

/* The kernel's name for each algorithm we serve, and its AF_ALG type. */
static const struct {
	const char *kname;
	int aead;
} kalgs[CRD_ALG_MAX_] = {
	[CRD_ALG_AES_GCM] = { "gcm(aes)", 1 },
	[CRD_ALG_AES_GMAC] = { "gcm(aes)", 1 },
	[CRD_ALG_AES_CBC] = { "cbc(aes)", 0 },
	[CRD_ALG_AES_CTR] = { "ctr(aes)", 0 },
	[CRD_ALG_AES_ECB] = { "ecb(aes)", 0 },
	[CRD_ALG_AES_XTS] = { "xts(aes)", 0 },
	[CRD_ALG_AES_LRW] = { "lrw(aes)", 0 },
	[CRD_ALG_AES_CBC_HMAC_SHA1] = { "authenc(hmac(sha1),cbc(aes))", 1 },
	[CRD_ALG_AES_CBC_HMAC_SHA256] = { "authenc(hmac(sha256),cbc(aes))", 1 },
	[CRD_ALG_AES_CBC_NULL] = { "cbc(aes)", 0 },
	[CRD_ALG_AES_GCM_RFC4106] = { "rfc4106(gcm(aes))", 1 },
};

#define KCAP_TAIL(min_, blk_)                                                  \
	.min_len = (min_), .max_len = KERN_MAX_LEN, .block = (blk_)
#define KCAP_MODE(a, iv_, blk_)                                                \
	{                                                                      \
		.alg = (a), KEYS_AES, CAP_IVS(iv_, iv_), NO_TAG,               \
		.aad = RANGE1(0), KCAP_TAIL(0, blk_)                           \
	}
#define KCAP_GCM(a, aad_max)                                                   \
	{                                                                      \
		.alg = (a), KEYS_AES, CAP_IVS(12, 12), GCM_TAGS,               \
		.aad = { 0, (aad_max), (aad_max) ? 1 : 0 }, KCAP_TAIL(0, 1)    \
	}
#define KCAP_AUTHENC(a, tag_)                                                  \
	{                                                                      \
		.alg = (a), KEYS_AES, .n_auth_key = 1,                         \
		.auth_key = { { 1, 64, 1 } }, .n_iv = 1, .iv = { RANGE1(16) }, \
		.n_tag = 1, .tag = { RANGE1(tag_) }, .default_tag = (tag_),    \
		.aad = { 0, CRD_AAD_MAX, 1 }, KCAP_TAIL(0, 16)                 \
	}

static const struct alg_cap kern_caps[] = {
	KCAP_GCM(CRD_ALG_AES_GCM, CRD_AAD_MAX),
	KCAP_GCM(CRD_ALG_AES_GMAC, 0),
	KCAP_MODE(CRD_ALG_AES_CBC, 16, 16),
	KCAP_MODE(CRD_ALG_AES_CTR, 16, 1),
	KCAP_MODE(CRD_ALG_AES_ECB, 0, 16),
	{ .alg = CRD_ALG_AES_XTS,
	  .n_key = 2,
	  .key = { RANGE1(32), RANGE1(64) },
	  CAP_IVS(16, 16),
	  NO_TAG,
	  .aad = RANGE1(0),
	  KCAP_TAIL(16, 1) },
	/* lrw(aes): an AES key followed by the 16-byte tweak key */
	{ .alg = CRD_ALG_AES_LRW,
	  .n_key = 1,
	  .key = { { 32, 48, 8 } },
	  CAP_IVS(16, 16),
	  NO_TAG,
	  .aad = RANGE1(0),
	  KCAP_TAIL(16, 16) },
	KCAP_AUTHENC(CRD_ALG_AES_CBC_HMAC_SHA1, 12),
	KCAP_AUTHENC(CRD_ALG_AES_CBC_HMAC_SHA256, 16),
	{ .alg = CRD_ALG_AES_CBC_NULL,
	  KEYS_AES,
	  CAP_IVS(16, 16),
	  NO_TAG,
	  .aad = { 0, CRD_AAD_MAX, 1 },
	  KCAP_TAIL(0, 16) },
	CAP_AES_GCM_RFC4106(KERN_MAX_LEN),
};

/* pcrypt parallelises AEAD requests only. */
static const struct alg_cap kern_pcrypt_caps[] = {
	KCAP_GCM(CRD_ALG_AES_GCM, CRD_AAD_MAX),
	KCAP_GCM(CRD_ALG_AES_GMAC, 0),
	KCAP_AUTHENC(CRD_ALG_AES_CBC_HMAC_SHA1, 12),
	KCAP_AUTHENC(CRD_ALG_AES_CBC_HMAC_SHA256, 16),
	CAP_AES_GCM_RFC4106(KERN_MAX_LEN),
};

/* What probing found, per engine flavour and algorithm. */
struct kern_state {
	struct {
		int ok;
		int prio;
		char driver[KPROC_NAME_MAX];
		char why[KERN_WHY];
	} a[CRD_ALG_MAX_];
};
static struct kern_state kstate[2]; /* [0] kernel, [1] kernel-pcrypt */
static enum kernel_pcrypt_mode pcrypt_mode = KPCRYPT_AUTO;
static atomic_uint next_worker_id[2];

static char pcrypt_algs[512];

void engine_kernel_configure(enum kernel_pcrypt_mode mode, const char *algs)
{
	pcrypt_mode = mode;
	snprintf(pcrypt_algs, sizeof(pcrypt_algs), "%s", algs ? algs : "");
}

/* Is kname in the configured list (or is there no list)? */
static int pcrypt_wanted(const char *kname)
{
	if (!pcrypt_algs[0])
		return 1;
	size_t l = strlen(kname);
	for (const char *p = pcrypt_algs; (p = strstr(p, kname)); p += l)
		if ((p == pcrypt_algs || p[-1] == ',') &&
		    (p[l] == ',' || p[l] == '\0'))
			return 1;
	return 0;
}

/* The session's engine-private part: lives in its locked key slot. */
struct kern_sess {
	struct kcapi_handle *tfm;	      /* owns the transform */
	struct kcapi_handle *op[MAX_WORKERS]; /* one op socket per worker */
	int aead;
};
_Static_assert(sizeof(struct kern_sess) <= sizeof(((struct session *)0)->key),
	       "kernel session state fits the slot");

struct kern_worker {
	unsigned id;
	uint8_t *in, *out; /* KERN_SCRATCH each, one mapping */
};

/* ---- probing ---- */

static int read_int_file(const char *path, int *v)
{
	char *t = kproc_read(path);
	if (!t)
		return -errno;
	*v = atoi(t);
	free(t);
	return 0;
}

/* Why binding kname failed, in an operator's words. */
static void why_bind_failed(char *why, size_t n, const char *kname, int err)
{
	int v = 0;
	if (err == -EPERM || err == -EACCES)
		snprintf(why, n, "no permission to use AF_ALG for %s", kname);
	else if (err == -EAFNOSUPPORT || err == -EOPNOTSUPP)
		snprintf(why, n, "no AF_ALG in this kernel");
	else if (read_int_file("/proc/sys/crypto/fips_enabled", &v) == 0 &&
		 v == 1)
		snprintf(why, n,
			 "%s refused: the kernel is in FIPS mode "
			 "(crypto.fips_enabled = 1)",
			 kname);
	else if (read_int_file("/proc/sys/kernel/modules_disabled", &v) == 0 &&
		 v == 1)
		snprintf(why, n,
			 "kernel has no %s loaded, and kernel.modules_disabled "
			 "= 1 forbids loading it",
			 kname);
	else
		snprintf(why, n, "kernel has no %s (%s)", kname,
			 strerror(-err));
}

static int kern_handle_init(struct kcapi_handle **h, int aead, const char *name)
{
	return aead ? kcapi_aead_init(h, name, 0)
		    : kcapi_cipher_init(h, name, 0);
}

/* A zero-key trial op through driver: proves the whole path, including
 * async completion for pcrypt. 0 or -errno. */
static int kern_trial(unsigned alg, const char *driver)
{
	struct kcapi_handle *h;
	int aead = kalgs[alg].aead;
	int err = kern_handle_init(&h, aead, driver);
	if (err)
		return err;
	uint8_t key[64] = { 0 }, iv[16] = { 0 }, in[32] = { 0 }, out[64];
	size_t klen = 16;
	if (alg == CRD_ALG_AES_XTS || alg == CRD_ALG_AES_LRW) {
		klen = 32;
		key[16] = 1; /* XTS refuses equal halves in FIPS mode */
	}
	if (alg == CRD_ALG_AES_GCM_RFC4106)
		klen = 20; /* key || salt */
	if (alg == CRD_ALG_AES_CBC_HMAC_SHA1 ||
	    alg == CRD_ALG_AES_CBC_HMAC_SHA256) {
		/* rtattr{8, CRYPTO_AUTHENC_KEYA_PARAM} be32(16), auth, enc */
		uint16_t rta[2] = { 8, 1 };
		uint32_t enclen = htonl(16);
		memcpy(key, rta, 4);
		memcpy(key + 4, &enclen, 4);
		klen = 8 + 20 + 16;
	}
	ssize_t r;
	if (aead) {
		/* libkcapi reads until it has outlen bytes: it must be exact */
		unsigned tag = alg == CRD_ALG_AES_CBC_HMAC_SHA1 ? 12 : 16;
		err = kcapi_aead_setkey(h, key, klen);
		if (!err)
			err = kcapi_aead_settaglen(h, tag);
		/* rfc4106 wants AAD (8) || IV (8) in front: assoclen 16 */
		unsigned pre = alg == CRD_ALG_AES_GCM_RFC4106 ? 16 : 0;
		if (!err) {
			kcapi_aead_setassoclen(h, pre);
			r = kcapi_aead_encrypt(h, in, pre + 16, iv, out,
					       pre + 16 + tag,
					       KCAPI_ACCESS_SENDMSG);
			err = r < 0 ? (int)r : r != pre + 16 + tag ? -EIO : 0;
		}
	} else {
		err = kcapi_cipher_setkey(h, key, klen);
		if (!err) {
			r = kcapi_cipher_encrypt(h, in, 32, iv, out, 32,
						 KCAPI_ACCESS_SENDMSG);
			err = r < 0 ? (int)r : r != 32 ? -EIO : 0;
		}
	}
	kcapi_cipher_destroy(h);
	return err;
}

/* socket(AF_ALG) itself: 0, or -errno with the reason. */
static int kern_af_alg(char *why, size_t n)
{
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	int err = -errno;
	if (err == -EAFNOSUPPORT)
		snprintf(why, n,
			 "no AF_ALG in this kernel (socket(AF_ALG): %s)",
			 strerror(-err));
	else if (err == -EPERM || err == -EACCES)
		snprintf(why, n,
			 "AF_ALG sockets are not permitted here (%s: seccomp, "
			 "an LSM or RestrictAddressFamilies=)",
			 strerror(-err));
	else
		snprintf(why, n, "socket(AF_ALG): %s", strerror(-err));
	return err;
}

static int kern_probe_alg(unsigned alg)
{
	struct kern_state *st = &kstate[0];
	const char *kname = kalgs[alg].kname;
	const char *type = kalgs[alg].aead ? "aead" : "skcipher";
	char *why = st->a[alg].why;
	size_t wn = sizeof(st->a[alg].why);

	/* Binding by the generic name instantiates the template if needed. */
	struct kcapi_handle *h;
	int err = kern_handle_init(&h, kalgs[alg].aead, kname);
	if (err) {
		why_bind_failed(why, wn, kname, err);
		return err;
	}
	kcapi_cipher_destroy(h);
	err = kproc_find_now(kname, type, KPROC_PLAIN, st->a[alg].driver,
			     sizeof(st->a[alg].driver), &st->a[alg].prio);
	if (err) {
		snprintf(why, wn,
			 "%s binds, but /proc/crypto lists no driver for it "
			 "other than pcrypt",
			 kname);
		return err;
	}
	err = kern_trial(alg, st->a[alg].driver);
	if (err) {
		snprintf(why, wn, "%s (%s) refused a trial operation: %s",
			 kname, st->a[alg].driver, strerror(-err));
		return err;
	}
	st->a[alg].ok = 1;
	return 0;
}

static int kern_probe(char *why, size_t why_len)
{
	memset(&kstate[0], 0, sizeof(kstate[0]));
	int err = kern_af_alg(why, why_len);
	if (err) {
		for (unsigned a = 0; a < CRD_ALG_MAX_; a++)
			snprintf(kstate[0].a[a].why, KERN_WHY, "%s", why);
		return err;
	}
	unsigned ok = 0, first_bad = 0;
	for (unsigned a = 1; a < CRD_ALG_MAX_; a++) {
		if (!kalgs[a].kname)
			continue;
		if (kern_probe_alg(a) == 0) {
			ok++;
			log_debug("kernel: %s -> %s (priority %d)", alg_name(a),
				  kstate[0].a[a].driver, kstate[0].a[a].prio);
		} else {
			log_info("kernel: %s unavailable: %s", alg_name(a),
				 kstate[0].a[a].why);
			if (!first_bad)
				first_bad = a;
		}
	}
	if (!ok) {
		snprintf(why, why_len, "%s", kstate[0].a[first_bad].why);
		return -ENOENT;
	}
	snprintf(why, why_len, "AF_ALG, %u algorithm(s)", ok);
	return 0;
}

/* ---- pcrypt instances ---- */

/* cryptoshim.ko's sysfs entry for kname: its driver name. 0 or -ENOENT. */
static int shim_find(const char *kname, char *driver, size_t n, int *prio)
{
	static const char base[] = "/sys/kernel/cryptoshim/instances";
	DIR *d = opendir(base);
	if (!d)
		return -ENOENT;
	int err = -ENOENT;
	struct dirent *de;
	while (err && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s/alg", base, de->d_name);
		char *alg = kproc_read(path);
		if (!alg)
			continue;
		alg[strcspn(alg, "\n")] = '\0';
		if (!strcmp(alg, kname)) {
			snprintf(path, sizeof(path), "%s/%s/driver", base,
				 de->d_name);
			char *drv = kproc_read(path);
			snprintf(path, sizeof(path), "%s/%s/priority", base,
				 de->d_name);
			if (drv) {
				drv[strcspn(drv, "\n")] = '\0';
				if (strlen(drv) < n && drv[0]) {
					strcpy(driver, drv);
					*prio = 0;
					read_int_file(path, prio);
					err = 0;
				}
				free(drv);
			}
		}
		free(alg);
	}
	closedir(d);
	return err;
}

/* Ask the kernel (crypto_user netlink, CAP_NET_ADMIN) to instantiate
 * pcrypt(kname). 0 (made, or already there) or -errno. */
static int pcrypt_create(const char *kname)
{
	struct {
		struct nlmsghdr h;
		struct crypto_user_alg a;
	} req;
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = CRYPTO_MSG_NEWALG;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.h.nlmsg_seq = 1;
	int w = snprintf(req.a.cru_name, sizeof(req.a.cru_name), "pcrypt(%s)",
			 kname);
	if (w < 0 || (size_t)w >= sizeof(req.a.cru_name))
		return -ENAMETOOLONG;
	req.a.cru_type = CRYPTO_ALG_TYPE_AEAD;
	req.a.cru_mask = CRYPTO_ALG_TYPE_MASK;

	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_CRYPTO);
	if (fd < 0)
		return -errno;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int err = 0;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0) {
		err = -errno;
	} else {
		union {
			struct nlmsghdr h;
			char b[4096];
		} rep;
		struct timeval tv = { .tv_sec = 5 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		ssize_t r = recv(fd, &rep, sizeof(rep), 0);
		if (r < 0)
			err = -errno;
		else if ((size_t)r < sizeof(struct nlmsghdr) +
					     sizeof(struct nlmsgerr) ||
			 rep.h.nlmsg_type != NLMSG_ERROR)
			err = -EPROTO;
		else
			err = ((struct nlmsgerr *)NLMSG_DATA(&rep.h))->error;
	}
	close(fd);
	return err == -EEXIST ? 0 : err;
}

/* The pcrypt instance for alg's kernel name: shim, existing, or made. */
static int pcrypt_probe_alg(unsigned alg)
{
	struct kern_state *st = &kstate[1];
	const char *kname = kalgs[alg].kname;
	char *why = st->a[alg].why;
	size_t wn = sizeof(st->a[alg].why);
	char *drv = st->a[alg].driver;
	size_t dn = sizeof(st->a[alg].driver);
	int *prio = &st->a[alg].prio;
	const char *how = "cryptoshim.ko";

	int err = shim_find(kname, drv, dn, prio);
	if (err) {
		err = kproc_find_now(kname, "aead", KPROC_PCRYPT, drv, dn,
				     prio);
		how = "an existing instance";
	}
	if (err && pcrypt_mode != KPCRYPT_CREATE) {
		snprintf(why, wn,
			 "no pcrypt(%s) instance: load cryptoshim.ko, or set "
			 "kernel.pcrypt = create",
			 kname);
		return err;
	}
	if (err) {
		/* The kernel may answer before the instance has passed its
		 * self-test (cryptomgr runs it in a thread), so look again
		 * for a while whatever NEWALG said. */
		int nerr = pcrypt_create(kname);
		for (int i = 0; err && i < 50; i++) {
			if (i)
				usleep(100 * 1000);
			err = kproc_find_now(kname, "aead", KPROC_PCRYPT, drv,
					     dn, prio);
			if (err && nerr && nerr != -ENOENT && nerr != -EAGAIN)
				break; /* a real refusal: do not wait */
		}
		how = "created over crypto_user netlink";
		if (err && nerr) {
			if (nerr == -EPERM || nerr == -EACCES)
				snprintf(why, wn,
					 "no pcrypt(%s) instance, and creating "
					 "one needs CAP_NET_ADMIN (or load "
					 "cryptoshim.ko)",
					 kname);
			else if (nerr == -EPROTONOSUPPORT)
				snprintf(
					why, wn,
					"no pcrypt(%s) instance, and the kernel "
					"has no crypto_user netlink to create "
					"one",
					kname);
			else
				snprintf(why, wn,
					 "no pcrypt(%s) instance, and creating "
					 "one failed: %s",
					 kname, strerror(-nerr));
			return nerr;
		}
		if (err) {
			snprintf(why, wn,
				 "pcrypt(%s) was created but /proc/crypto does "
				 "not list it",
				 kname);
			return err;
		}
	}
	err = kern_trial(alg, drv);
	if (err) {
		char d[KPROC_NAME_MAX];
		snprintf(d, sizeof(d), "%s", drv);
		snprintf(why, wn, "%s refused a trial operation: %s", d,
			 strerror(-err));
		return err;
	}
	log_info("kernel-pcrypt: %s -> %s (priority %d, %s)", alg_name(alg),
		 drv, *prio, how);
	st->a[alg].ok = 1;
	return 0;
}

static int kern_pcrypt_probe(char *why, size_t why_len)
{
	memset(&kstate[1], 0, sizeof(kstate[1]));
	int err = 0;
	if (pcrypt_mode == KPCRYPT_OFF) {
		snprintf(why, why_len,
			 "pcrypt is switched off by configuration "
			 "(kernel.pcrypt = off)");
		err = -ENODEV;
	} else {
		err = kern_af_alg(why, why_len);
	}
	if (err) {
		for (unsigned a = 0; a < CRD_ALG_MAX_; a++)
			snprintf(kstate[1].a[a].why, KERN_WHY, "%s", why);
		return err;
	}
	unsigned ok = 0;
	const char *first_why = NULL;
	for (size_t i = 0;
	     i < sizeof(kern_pcrypt_caps) / sizeof(kern_pcrypt_caps[0]); i++) {
		unsigned a = kern_pcrypt_caps[i].alg;
		if (!pcrypt_wanted(kalgs[a].kname)) {
			snprintf(kstate[1].a[a].why, KERN_WHY,
				 "%s is not in kernel.pcrypt_algs",
				 kalgs[a].kname);
			if (!first_why)
				first_why = kstate[1].a[a].why;
			continue;
		}
		if (pcrypt_probe_alg(a) == 0) {
			ok++;
		} else {
			log_info("kernel-pcrypt: %s unavailable: %s",
				 alg_name(a), kstate[1].a[a].why);
			if (!first_why)
				first_why = kstate[1].a[a].why;
		}
	}
	if (!ok) {
		snprintf(why, why_len, "%s", first_why ? first_why : "none");
		return -ENOENT;
	}
	snprintf(why, why_len, "AF_ALG, %u pcrypt algorithm(s)", ok);
	return 0;
}

static const char *kern_alg_unavailable(unsigned alg)
{
	return alg < CRD_ALG_MAX_ && !kstate[0].a[alg].ok ? kstate[0].a[alg].why
							  : NULL;
}

static const char *kern_pcrypt_alg_unavailable(unsigned alg)
{
	return alg < CRD_ALG_MAX_ && !kstate[1].a[alg].ok ? kstate[1].a[alg].why
							  : NULL;
}

/* ---- sessions ---- */

static void kern_session_fini(struct session *s)
{
	struct kern_sess *ks = (struct kern_sess *)s->key;
	for (unsigned i = 0; i < MAX_WORKERS; i++)
		if (ks->op[i])
			kcapi_cipher_destroy(ks->op[i]);
	if (ks->tfm)
		kcapi_cipher_destroy(ks->tfm);
	memset(ks, 0, sizeof(*ks));
}

static int kern_session_init_in(struct kern_state *st, struct session *s,
				void *wctx, const uint8_t *key, size_t key_len,
				const uint8_t *auth_key, size_t auth_key_len)
{
	struct kern_sess *ks = (struct kern_sess *)s->key;
	unsigned alg = s->alg;
	if (wctx)
		return -EOPNOTSUPP; /* session-less: a socket per op, no */
	if (alg >= CRD_ALG_MAX_ || !kalgs[alg].kname || !st->a[alg].ok)
		return -EOPNOTSUPP;
	if (alg == CRD_ALG_AES_XTS &&
	    !memcmp(key, key + key_len / 2, key_len / 2))
		return -EINVAL; /* as the openssl engine: equal halves */
	memset(ks, 0, sizeof(*ks));
	ks->aead = kalgs[alg].aead;
	int err = kern_handle_init(&ks->tfm, ks->aead, st->a[alg].driver);
	if (err)
		return err == -ENOMEM ? -ENOMEM : -EIO;

	if (alg == CRD_ALG_AES_CBC_HMAC_SHA1 ||
	    alg == CRD_ALG_AES_CBC_HMAC_SHA256) {
		/* The authenc key blob: rtattr{len 8, type
		 * CRYPTO_AUTHENC_KEYA_PARAM}, be32 cipher key length, the
		 * HMAC key, the AES key. */
		uint8_t blob[8 + CRD_AUTH_KEY_MAX + CRD_KEY_MAX];
		uint16_t rta[2] = { 8, 1 };
		uint32_t enclen = htonl((uint32_t)key_len);
		memcpy(blob, rta, 4);
		memcpy(blob + 4, &enclen, 4);
		memcpy(blob + 8, auth_key, auth_key_len);
		memcpy(blob + 8 + auth_key_len, key, key_len);
		err = kcapi_aead_setkey(ks->tfm, blob,
					8 + auth_key_len + key_len);
		explicit_bzero(blob, sizeof(blob));
	} else if (ks->aead) {
		err = kcapi_aead_setkey(ks->tfm, key, key_len);
	} else {
		err = kcapi_cipher_setkey(ks->tfm, key, key_len);
	}
	if (!err && ks->aead)
		err = kcapi_aead_settaglen(ks->tfm, s->tag_len);
	if (err) {
		kern_session_fini(s);
		return -EINVAL; /* the kernel refused the key or tag size */
	}
	return 0;
}

static int kern_session_init(struct session *s, void *wctx, const uint8_t *key,
			     size_t key_len, const uint8_t *auth_key,
			     size_t auth_key_len)
{
	return kern_session_init_in(&kstate[0], s, wctx, key, key_len, auth_key,
				    auth_key_len);
}

static int kern_pcrypt_session_init(struct session *s, void *wctx,
				    const uint8_t *key, size_t key_len,
				    const uint8_t *auth_key,
				    size_t auth_key_len)
{
	return kern_session_init_in(&kstate[1], s, wctx, key, key_len, auth_key,
				    auth_key_len);
}

/* ---- workers ---- */

static void *kern_worker_init_in(atomic_uint *next_id)
{
	struct kern_worker *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	void *p = mmap(NULL, 2 * (size_t)KERN_SCRATCH, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		free(w);
		return NULL;
	}
	madvise(p, 2 * (size_t)KERN_SCRATCH, MADV_DONTDUMP); /* plaintext */
	w->in = p;
	w->out = w->in + KERN_SCRATCH;
	w->id = atomic_fetch_add(next_id, 1) % MAX_WORKERS;
	return w;
}

static void *kern_worker_init(void)
{
	return kern_worker_init_in(&next_worker_id[0]);
}

static void *kern_pcrypt_worker_init(void)
{
	return kern_worker_init_in(&next_worker_id[1]);
}

static void kern_worker_fini(void *wctx)
{
	struct kern_worker *w = wctx;
	if (!w)
		return;
	munmap(w->in, 2 * (size_t)KERN_SCRATCH);
	free(w);
}

/* This worker's operation socket on the session's transform. */
static struct kcapi_handle *kern_op_handle(struct kern_worker *w,
					   const struct session *s)
{
	struct kern_sess *ks = (struct kern_sess *)s->key;
	if (!ks->op[w->id] && kcapi_handle_reinit(&ks->op[w->id], ks->tfm, 0))
		ks->op[w->id] = NULL;
	return ks->op[w->id];
}

static int kern_aead_op(struct kern_worker *w, struct kcapi_handle *h,
			struct engine_op *op)
{
	int gmac = op->sess->alg == CRD_ALG_AES_GMAC;
	int rfc4106 = op->sess->alg == CRD_ALG_AES_GCM_RFC4106;
	int enc = op->op == CRD_OP_ENCRYPT;
	/* GMAC: the data is the AAD, and there is no plaintext. */
	const uint8_t *aad = gmac ? op->src : op->aad;
	size_t alen = gmac ? op->len : op->aad_len;
	size_t dlen = gmac ? 0 : op->len;
	size_t tlen = op->tag_len;

	memcpy(w->in, aad, alen);
	if (rfc4106) { /* the kernel wants the IV after the AAD, too */
		memcpy(w->in + alen, op->iv, 8);
		alen += 8;
	}
	if (dlen)
		memcpy(w->in + alen, op->src, dlen);
	size_t inlen = alen + dlen, outlen = alen + dlen + tlen;
	if (!enc) {
		memcpy(w->in + inlen, op->tag, tlen);
		inlen += tlen;
		outlen = alen + dlen;
	}
	kcapi_aead_setassoclen(h, alen);
	ssize_t r = enc ? kcapi_aead_encrypt(h, w->in, inlen, op->iv, w->out,
					     outlen ? outlen : 1,
					     KCAPI_ACCESS_HEURISTIC)
			: kcapi_aead_decrypt(h, w->in, inlen, op->iv, w->out,
					     outlen ? outlen : 1,
					     KCAPI_ACCESS_HEURISTIC);
	int st = CRD_ST_OK;
	if (r == -EBADMSG) {
		st = CRD_ST_AUTH_FAILED;
		if (dlen)
			explicit_bzero(op->dst, dlen);
	} else if (r < 0 || (size_t)r != outlen) {
		st = CRD_ST_ENGINE;
	} else {
		if (dlen)
			memcpy(op->dst, w->out + alen, dlen);
		if (enc)
			memcpy(op->tag, w->out + alen + dlen, tlen);
	}
	explicit_bzero(w->in, inlen);
	explicit_bzero(w->out, outlen);
	return st;
}

static int kern_cipher_op(struct kern_worker *w, struct kcapi_handle *h,
			  struct engine_op *op)
{
	if (op->len == 0)
		return CRD_ST_OK; /* nothing to do; the kernel wants data */
	memcpy(w->in, op->src, op->len);
	/* ECB has no IV; libkcapi sends none when iv is NULL. */
	const uint8_t *iv = op->sess->alg == CRD_ALG_AES_ECB ? NULL : op->iv;
	ssize_t r =
		op->op == CRD_OP_ENCRYPT
			? kcapi_cipher_encrypt(h, w->in, op->len, iv, w->out,
					       op->len, KCAPI_ACCESS_HEURISTIC)
			: kcapi_cipher_decrypt(h, w->in, op->len, iv, w->out,
					       op->len, KCAPI_ACCESS_HEURISTIC);
	int st = CRD_ST_OK;
	if (r < 0 || (size_t)r != op->len)
		st = CRD_ST_ENGINE;
	else
		memcpy(op->dst, w->out, op->len);
	explicit_bzero(w->in, op->len);
	explicit_bzero(w->out, op->len);
	return st;
}

static void kern_process(void *wctx, struct engine_op *ops, unsigned n)
{
	struct kern_worker *w = wctx;
	for (unsigned i = 0; i < n; i++) {
		struct engine_op *op = &ops[i];
		if (op->status != CRD_ST_OK)
			continue;
		struct kcapi_handle *h = kern_op_handle(w, op->sess);
		if (!h) {
			op->status = CRD_ST_ENGINE;
			continue;
		}
		const struct kern_sess *ks = (const void *)op->sess->key;
		op->status = ks->aead ? kern_aead_op(w, h, op)
				      : kern_cipher_op(w, h, op);
	}
}

const struct engine engine_kernel = {
	.name = "kernel",
	.caps = kern_caps,
	.n_caps = sizeof(kern_caps) / sizeof(kern_caps[0]),
	.probe = kern_probe,
	.session_init = kern_session_init,
	.session_fini = kern_session_fini,
	.worker_init = kern_worker_init,
	.worker_fini = kern_worker_fini,
	.process = kern_process,
	.alg_unavailable = kern_alg_unavailable,
	.no_sessionless = 1,
};

const struct engine engine_kernel_pcrypt = {
	.name = "kernel-pcrypt",
	.caps = kern_pcrypt_caps,
	.n_caps = sizeof(kern_pcrypt_caps) / sizeof(kern_pcrypt_caps[0]),
	.probe = kern_pcrypt_probe,
	.session_init = kern_pcrypt_session_init,
	.session_fini = kern_session_fini,
	.worker_init = kern_pcrypt_worker_init,
	.worker_fini = kern_worker_fini,
	.process = kern_process,
	.alg_unavailable = kern_pcrypt_alg_unavailable,
	.no_sessionless = 1,
};
