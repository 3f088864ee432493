/* SPDX-License-Identifier: MIT */
/*
 * The kernel engines' probing: is there AF_ALG, which driver serves each
 * algorithm (a trial operation through it), and for kernel-pcrypt where
 * each pcrypt instance comes from: cryptoshim.ko's sysfs entries, an
 * instance that already exists, or (kernel.pcrypt = create) one made over
 * crypto_user netlink. Each algorithm keeps its own reason when it is
 * unavailable.
 */
#include "kernel.h"
#include "names.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/cryptouser.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <kcapi.h>

#include "log.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif
/* From the kernel's include/linux/crypto.h, which is not uapi. */
#ifndef CRYPTO_ALG_TYPE_MASK
#define CRYPTO_ALG_TYPE_MASK 0x0000000f
#define CRYPTO_ALG_TYPE_AEAD 0x00000003
#endif

static enum kernel_pcrypt_mode pcrypt_mode = KPCRYPT_AUTO;
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

/* A zero-key trial op through driver: proves the whole path, including
 * async completion for pcrypt. 0 or -errno. */
static int kern_trial(unsigned alg, const char *driver)
{
	struct kcapi_handle *h;
	int aead = kern_algs[alg].aead;
	int err = kern_handle_init(&h, aead, driver);
	if (err)
		return err;
	uint8_t key[8 + CRD_AUTH_KEY_MAX + CRD_KEY_MAX] = { 0 }, iv[16] = { 0 };
	uint8_t in[32] = { 0 }, out[64];
	size_t klen = 16;
	if (alg == CRD_ALG_AES_XTS || alg == CRD_ALG_AES_LRW) {
		klen = 32;
		key[16] = 1; /* XTS refuses equal halves in FIPS mode */
	}
	if (alg == CRD_ALG_AES_GCM_RFC4106)
		klen = 20; /* key || salt */
	if (crd_alg_kind(alg) == CRD_KIND_AUTHENC) {
		static const uint8_t zero[20 + 16];
		klen = kern_authenc_blob(key, zero, 20, zero + 20, 16);
	}
	ssize_t r;
	if (aead) {
		/* libkcapi reads until it has outlen bytes: it must be exact */
		unsigned tag = crd_alg_kind(alg) == CRD_KIND_AUTHENC
				       ? crd_alg_tag_len(alg) /* the ICV */
				       : 16;
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

static int kern_probe_alg(struct kern_state *st, unsigned alg)
{
	const char *kname = kern_algs[alg].kname;
	const char *type = kern_algs[alg].aead ? "aead" : "skcipher";
	char *why = st->a[alg].why;
	size_t wn = sizeof(st->a[alg].why);

	/* Binding by the generic name instantiates the template if needed. */
	struct kcapi_handle *h;
	int err = kern_handle_init(&h, kern_algs[alg].aead, kname);
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

int kern_probe(const struct engine *e, char *why, size_t why_len)
{
	struct kern_state *st = e->priv;
	memset(st, 0, sizeof(*st));
	int err = kern_af_alg(why, why_len);
	if (err) {
		for (unsigned a = 0; a < CRD_ALG_MAX_; a++)
			snprintf(st->a[a].why, KERN_WHY, "%s", why);
		return err;
	}
	unsigned ok = 0, first_bad = 0;
	for (unsigned a = 1; a < CRD_ALG_MAX_; a++) {
		if (!kern_algs[a].kname)
			continue;
		if (kern_probe_alg(st, a) == 0) {
			ok++;
			log_debug("kernel: %s -> %s (priority %d)", alg_name(a),
				  st->a[a].driver, st->a[a].prio);
		} else {
			log_info("kernel: %s unavailable: %s", alg_name(a),
				 st->a[a].why);
			if (!first_bad)
				first_bad = a;
		}
	}
	if (!ok) {
		snprintf(why, why_len, "%s", st->a[first_bad].why);
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
static int pcrypt_probe_alg(struct kern_state *st, unsigned alg)
{
	const char *kname = kern_algs[alg].kname;
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

int kern_pcrypt_probe(const struct engine *e, char *why, size_t why_len)
{
	struct kern_state *st = e->priv;
	memset(st, 0, sizeof(*st));
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
			snprintf(st->a[a].why, KERN_WHY, "%s", why);
		return err;
	}
	unsigned ok = 0;
	const char *first_why = NULL;
	for (unsigned i = 0; i < e->n_caps; i++) {
		unsigned a = e->caps[i].alg;
		if (!pcrypt_wanted(kern_algs[a].kname)) {
			snprintf(st->a[a].why, KERN_WHY,
				 "%s is not in kernel.pcrypt_algs",
				 kern_algs[a].kname);
			if (!first_why)
				first_why = st->a[a].why;
			continue;
		}
		if (pcrypt_probe_alg(st, a) == 0) {
			ok++;
		} else {
			log_info("kernel-pcrypt: %s unavailable: %s",
				 alg_name(a), st->a[a].why);
			if (!first_why)
				first_why = st->a[a].why;
		}
	}
	if (!ok) {
		snprintf(why, why_len, "%s", first_why ? first_why : "none");
		return -ENOENT;
	}
	snprintf(why, why_len, "AF_ALG, %u pcrypt algorithm(s)", ok);
	return 0;
}

const char *kern_alg_unavailable(const struct engine *e, unsigned alg)
{
	const struct kern_state *st = e->priv;
	return alg < CRD_ALG_MAX_ && !st->a[alg].ok ? st->a[alg].why : NULL;
}
