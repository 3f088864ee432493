/* SPDX-License-Identifier: MIT */
/*
 * The DPDK path of cryptoctl bench: Debian's DPDK cryptodev software PMDs
 * (crypto_aesni_gcm for GCM, crypto_aesni_mb for CBC, CTR and ECB) run
 * in the bench's own process, the way a DPDK application would: ops from
 * a mempool each burst, enqueue, dequeue, status per op, back to the pool.
 * They process the bench's own slots (attached to mbufs as external
 * buffers), so every path of a size works on the same bytes and the same
 * number of buffers in rotation.
 *
 * A plugin: cryptod-bench does not link DPDK. bench_ref_dpdk.c dlopens this
 * object when the bench asks for the path and reports why not when it is
 * missing. The EAL runs without hugepages, PCI or shared files
 * (--no-huge --no-pci --no-shconf), its one lcore on the CPUs we may use.
 */
/* Session pools are DPDK 22.11's only way to make sessions, marked
 * experimental there. */
#define ALLOW_EXPERIMENTAL_API
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cryptodev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_version.h>

#include "bench.h"

enum {
	DPDK_OPS = 2048,     /* op pool: more than any burst in flight */
	DPDK_SESSIONS = 16,  /* two per algorithm in use, and spare */
	DPDK_QP_DESC = 2048, /* queue pair ring */
	DPDK_MAX_BURST = BENCH_MAX_BURST,
	DPDK_IV_OFFSET =
		sizeof(struct rte_crypto_op) + sizeof(struct rte_crypto_sym_op),
};

static struct {
	bool up;
	int gcm_dev, mb_dev; /* -1: not probed */
	struct rte_mempool *op_pool, *sess_pool, *mbuf_pool;
} eal = { .gcm_dev = -1, .mb_dev = -1 };

struct dpdk_ref {
	const struct bench_alg *a;
	int dev;
	bool aead;
	uint8_t key[BENCH_KEY_MAX];
	void *sess[2]; /* [dir == CC_DECRYPT]; made on first use */
	int sess_aad;  /* the AAD length they were made for */
	/* The slots the mbufs point at: reattached when the layout moves. */
	const uint8_t *bound_src;
	uint32_t bound_len;
	unsigned nbufs;
	struct rte_mbuf **src, **dst;
	struct rte_mbuf_ext_shared_info *shinfo; /* 2 * nbufs */
};

static void ext_free(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque; /* the slots belong to the bench */
}

/* The lcore on every CPU we may run on, so that the EAL leaves our
 * affinity (--cpu) as it is. */
static void lcores_arg(char *buf, size_t len)
{
	cpu_set_t set;
	size_t used;

	used = (size_t)snprintf(buf, len, "--lcores=0@(");
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE && used < len; c++)
			if (CPU_ISSET(c, &set))
				used += (size_t)snprintf(
					buf + used, len - used, "%s%d",
					buf[used - 1] == '(' ? "" : ",", c);
	if (used < len)
		snprintf(buf + used, len - used, ")");
}

static int dev_start(const char *name, char *why, size_t why_len)
{
	struct rte_cryptodev_config conf = {
		.socket_id = (int)rte_socket_id(),
		.nb_queue_pairs = 1,
	};
	struct rte_cryptodev_qp_conf qp = {
		.nb_descriptors = DPDK_QP_DESC,
		.mp_session = eal.sess_pool,
	};
	int dev = rte_cryptodev_get_dev_id(name);

	if (dev < 0) {
		snprintf(why, why_len, "DPDK has no %s device", name);
		return -ENODEV;
	}
	if (rte_cryptodev_configure((uint8_t)dev, &conf) < 0 ||
	    rte_cryptodev_queue_pair_setup((uint8_t)dev, 0, &qp,
					   conf.socket_id) < 0 ||
	    rte_cryptodev_start((uint8_t)dev) < 0) {
		snprintf(why, why_len, "%s: configure/start failed", name);
		return -EIO;
	}
	return dev;
}

static int dpdk_init(char *why, size_t why_len)
{
	char lcores[512];
	char *argv[] = {
		"cryptoctl-bench",
		"--no-huge",
		"--no-pci",
		"--no-shconf",
		"--no-telemetry",
		"-m",
		"256",
		lcores,
		"--log-level=3",
		"--vdev",
		"crypto_aesni_gcm0",
		"--vdev",
		"crypto_aesni_mb0",
		NULL,
	};
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
	unsigned sess_size;

	if (eal.up)
		return 0;
	lcores_arg(lcores, sizeof(lcores));
	if (rte_eal_init(argc, argv) < 0) {
		snprintf(why, why_len, "rte_eal_init: %s",
			 rte_strerror(rte_errno));
		return -ENODEV;
	}
	eal.op_pool = rte_crypto_op_pool_create(
		"bench_ops", RTE_CRYPTO_OP_TYPE_SYMMETRIC, DPDK_OPS, 128,
		BENCH_IV_MAX, (int)rte_socket_id());
	eal.mbuf_pool = rte_pktmbuf_pool_create("bench_mbufs", 2 * 4096, 0, 0,
						0, (int)rte_socket_id());
	sess_size = 0;
	const char *names[] = { "crypto_aesni_gcm0", "crypto_aesni_mb0" };
	for (unsigned i = 0; i < 2; i++) {
		int d = rte_cryptodev_get_dev_id(names[i]);
		unsigned s = d < 0 ? 0
				   : rte_cryptodev_sym_get_private_session_size(
					     (uint8_t)d);
		if (s > sess_size)
			sess_size = s;
	}
	eal.sess_pool = rte_cryptodev_sym_session_pool_create(
		"bench_sess", DPDK_SESSIONS, sess_size, 0, 0,
		(int)rte_socket_id());
	if (!eal.op_pool || !eal.mbuf_pool || !eal.sess_pool) {
		snprintf(why, why_len, "DPDK mempools: %s",
			 rte_strerror(rte_errno));
		return -ENOMEM;
	}
	eal.gcm_dev = dev_start("crypto_aesni_gcm0", why, why_len);
	eal.mb_dev = dev_start("crypto_aesni_mb0", why, why_len);
	if (eal.gcm_dev < 0 && eal.mb_dev < 0)
		return -ENODEV;
	eal.up = true;
	return 0;
}

static void dpdk_fini(void)
{
	if (!eal.up)
		return;
	if (eal.gcm_dev >= 0)
		rte_cryptodev_stop((uint8_t)eal.gcm_dev);
	if (eal.mb_dev >= 0)
		rte_cryptodev_stop((uint8_t)eal.mb_dev);
	rte_eal_cleanup();
	eal.up = false;
}

static int cipher_algo(enum cc_alg alg, enum rte_crypto_cipher_algorithm *out)
{
	switch (alg) {
	case CC_ALG_AES_CBC:
		*out = RTE_CRYPTO_CIPHER_AES_CBC;
		return 0;
	case CC_ALG_AES_CTR:
		*out = RTE_CRYPTO_CIPHER_AES_CTR;
		return 0;
	case CC_ALG_AES_ECB:
		*out = RTE_CRYPTO_CIPHER_AES_ECB;
		return 0;
	default:
		return -ENOTSUP;
	}
}

static void unbind(struct dpdk_ref *r)
{
	for (unsigned i = 0; i < r->nbufs; i++) {
		if (r->src)
			rte_pktmbuf_free(r->src[i]);
		if (r->dst)
			rte_pktmbuf_free(r->dst[i]);
	}
	free(r->src);
	free(r->dst);
	free(r->shinfo);
	r->src = r->dst = NULL;
	r->shinfo = NULL;
	r->nbufs = 0;
	r->bound_src = NULL;
}

static struct rte_mbuf *ext_mbuf(struct rte_mbuf_ext_shared_info *sh,
				 uint8_t *data, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(eal.mbuf_pool);

	if (!m)
		return NULL;
	sh->free_cb = ext_free;
	sh->fcb_opaque = NULL;
	rte_mbuf_ext_refcnt_set(sh, 1);
	/* IOVA as VA: the software PMDs read virtual addresses only. */
	rte_pktmbuf_attach_extbuf(m, data, (rte_iova_t)(uintptr_t)data,
				  (uint16_t)len, sh);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	return m;
}

/* One mbuf per slot (and per destination slot), over the layout's own
 * bytes. */
static int bind(struct dpdk_ref *r, const struct bench_layout *l)
{
	if (r->bound_src == l->src && r->bound_len == l->len &&
	    r->nbufs == l->nslots)
		return 0;
	unbind(r);
	if (l->len > UINT16_MAX)
		return -E2BIG;
	r->src = calloc(l->nslots, sizeof(*r->src));
	r->dst = calloc(l->nslots, sizeof(*r->dst));
	r->shinfo = calloc(2 * (size_t)l->nslots, sizeof(*r->shinfo));
	if (!r->src || !r->dst || !r->shinfo)
		goto nomem;
	r->nbufs = l->nslots;
	for (unsigned i = 0; i < l->nslots; i++) {
		r->src[i] = ext_mbuf(&r->shinfo[2 * i], bench_slot_src(l, i),
				     l->len);
		if (!r->src[i])
			goto nomem;
		if (!l->oop)
			continue;
		r->dst[i] = ext_mbuf(&r->shinfo[2 * i + 1],
				     bench_slot_dst(l, i), l->len);
		if (!r->dst[i])
			goto nomem;
	}
	r->bound_src = l->src;
	r->bound_len = l->len;
	return 0;
nomem:
	unbind(r);
	return -ENOMEM;
}

static void *make_session(struct dpdk_ref *r, enum cc_dir dir, uint32_t aad_len)
{
	const struct bench_alg *a = r->a;
	struct rte_crypto_sym_xform x;

	memset(&x, 0, sizeof(x));
	x.next = NULL;
	if (r->aead) {
		x.type = RTE_CRYPTO_SYM_XFORM_AEAD;
		x.aead.op = dir == CC_ENCRYPT ? RTE_CRYPTO_AEAD_OP_ENCRYPT
					      : RTE_CRYPTO_AEAD_OP_DECRYPT;
		x.aead.algo = RTE_CRYPTO_AEAD_AES_GCM;
		x.aead.key.data = r->key;
		x.aead.key.length = a->key_len;
		x.aead.iv.offset = DPDK_IV_OFFSET;
		x.aead.iv.length = a->iv_len;
		x.aead.digest_length = a->tag_len;
		x.aead.aad_length = (uint16_t)aad_len;
	} else {
		x.type = RTE_CRYPTO_SYM_XFORM_CIPHER;
		x.cipher.op = dir == CC_ENCRYPT ? RTE_CRYPTO_CIPHER_OP_ENCRYPT
						: RTE_CRYPTO_CIPHER_OP_DECRYPT;
		if (cipher_algo(a->alg, &x.cipher.algo))
			return NULL;
		x.cipher.key.data = r->key;
		x.cipher.key.length = a->key_len;
		x.cipher.iv.offset = DPDK_IV_OFFSET;
		x.cipher.iv.length = a->iv_len;
	}
	return rte_cryptodev_sym_session_create((uint8_t)r->dev, &x,
						eal.sess_pool);
}

static void free_sessions(struct dpdk_ref *r)
{
	for (unsigned d = 0; d < 2; d++)
		if (r->sess[d])
			rte_cryptodev_sym_session_free((uint8_t)r->dev,
						       r->sess[d]);
	r->sess[0] = r->sess[1] = NULL;
}

static void dpdk_destroy(void *priv)
{
	struct dpdk_ref *r = priv;

	if (!r)
		return;
	free_sessions(r);
	unbind(r);
	explicit_bzero(r->key, sizeof(r->key));
	free(r);
}

static int dpdk_create(const struct bench_alg *a, const uint8_t *key,
		       const uint8_t *auth_key, void **priv, char *desc,
		       size_t desc_len)
{
	enum rte_crypto_cipher_algorithm c;
	struct dpdk_ref *r;
	bool aead = a->alg == CC_ALG_AES_GCM;
	int dev, rc;

	(void)auth_key;
	rc = dpdk_init(desc, desc_len);
	if (rc < 0)
		return rc;
	if (!aead && cipher_algo(a->alg, &c)) {
		snprintf(desc, desc_len, "no DPDK software PMD path for %s",
			 a->name);
		return -ENOTSUP;
	}
	dev = aead ? eal.gcm_dev : eal.mb_dev;
	if (dev < 0) {
		snprintf(desc, desc_len, "DPDK %s device missing",
			 aead ? "crypto_aesni_gcm" : "crypto_aesni_mb");
		return -ENODEV;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->a = a;
	r->dev = dev;
	r->aead = aead;
	r->sess_aad = -1;
	memcpy(r->key, key, a->key_len);
	/* rte_version(): "DPDK 22.11.11". */
	snprintf(desc, desc_len, "%s %s PMD, in-process (%s)", rte_version(),
		 aead ? "crypto_aesni_gcm" : "crypto_aesni_mb",
		 aead ? "ipsec-mb direct GCM API" : "ipsec-mb job API");
	*priv = r;
	return 0;
}

static int dpdk_burst(void *priv, const struct bench_layout *l, enum cc_dir dir,
		      unsigned first, unsigned n, bool checked)
{
	struct dpdk_ref *r = priv;
	struct rte_crypto_op *ops[DPDK_MAX_BURST];
	unsigned i, sent = 0, got = 0, bad = 0;
	int rc;

	(void)checked;
	if (n > DPDK_MAX_BURST)
		return -EINVAL;
	rc = bind(r, l);
	if (rc < 0)
		return rc;
	if (r->sess_aad != (int)l->aad_len) {
		free_sessions(r);
		r->sess_aad = -1;
	}
	void **sess = &r->sess[dir == CC_DECRYPT];

	if (!*sess) {
		*sess = make_session(r, dir, l->aad_len);
		if (!*sess)
			return -ENOTSUP;
		r->sess_aad = (int)l->aad_len;
	}
	if (rte_crypto_op_bulk_alloc(eal.op_pool, RTE_CRYPTO_OP_TYPE_SYMMETRIC,
				     ops, n) != n)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct rte_crypto_op *op = ops[i];
		struct rte_crypto_sym_op *sym = op->sym;
		unsigned s = first + i;

		sym->m_src = r->src[s];
		sym->m_dst = l->oop ? r->dst[s] : NULL;
		memcpy(rte_crypto_op_ctod_offset(op, uint8_t *, DPDK_IV_OFFSET),
		       l->iv[s], r->a->iv_len);
		if (r->aead) {
			sym->aead.data.offset = 0;
			sym->aead.data.length = l->len;
			sym->aead.digest.data = bench_slot_tag(l, s);
			sym->aead.digest.phys_addr =
				(rte_iova_t)(uintptr_t)bench_slot_tag(l, s);
			sym->aead.aad.data = bench_slot_aad(l, s);
			sym->aead.aad.phys_addr =
				(rte_iova_t)(uintptr_t)bench_slot_aad(l, s);
		} else {
			sym->cipher.data.offset = 0;
			sym->cipher.data.length = l->len;
		}
		rte_crypto_op_attach_sym_session(op, *sess);
	}
	/* Enqueue and dequeue in turn: a full queue pair drains as we go. */
	while (got < n) {
		struct rte_crypto_op *done[DPDK_MAX_BURST];

		if (sent < n)
			sent += rte_cryptodev_enqueue_burst(
				(uint8_t)r->dev, 0, ops + sent,
				(uint16_t)(n - sent));
		uint16_t k = rte_cryptodev_dequeue_burst(
			(uint8_t)r->dev, 0, done, (uint16_t)(sent - got));

		for (uint16_t j = 0; j < k; j++) {
			if (done[j]->status == RTE_CRYPTO_OP_STATUS_AUTH_FAILED)
				bad++;
			else if (done[j]->status !=
				 RTE_CRYPTO_OP_STATUS_SUCCESS)
				rc = -EIO;
		}
		rte_mempool_put_bulk(eal.op_pool, (void **)done, k);
		got += k;
	}
	return rc < 0 ? rc : (int)bad;
}

static const struct bench_ref_ops dpdk_ops = {
	.create = dpdk_create,
	.destroy = dpdk_destroy,
	.burst = dpdk_burst,
};

/* What bench_ref_dpdk.c looks up. */
const struct bench_dpdk_plugin bench_dpdk_plugin = {
	.abi = BENCH_DPDK_ABI,
	.ops = &dpdk_ops,
	.fini = dpdk_fini,
};
