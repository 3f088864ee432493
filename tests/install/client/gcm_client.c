/* SPDX-License-Identifier: MIT */
/*
 * A client as a user writes it, built against the *installed* library
 * (pkg-config, or CMake's find_package): one AES-128-GCM vector through
 * the zero-copy queue, then the same ciphertext with a corrupted tag,
 * which must come back CC_ERR_AUTH_FAILED.
 *
 *   gcm_client SOCKET KEY IV PT AAD CT TAG     (hex; exit 0 = match)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cryptoclient.h>

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	for (; s[0] && s[1] && n < max; s += 2) {
		unsigned v;
		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t)v;
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr,
			"usage: gcm_client SOCKET KEY IV PT AAD CT TAG\n");
		return 2;
	}
	uint8_t key[32], iv[16], pt[256], aad[256], ct[256], tag[16];
	size_t key_len = unhex(argv[2], key, sizeof(key));
	size_t iv_len = unhex(argv[3], iv, sizeof(iv));
	size_t len = unhex(argv[4], pt, sizeof(pt));
	size_t aad_len = unhex(argv[5], aad, sizeof(aad));
	unhex(argv[6], ct, sizeof(ct));
	size_t tag_len = unhex(argv[7], tag, sizeof(tag));

	struct cc_conn *c;
	int err = cc_connect(argv[1], "install-test", &c);
	if (err) {
		fprintf(stderr, "connect: %s\n", cc_strerror(err));
		return 1;
	}
	struct cc_session_params sp = { .alg = CC_ALG_AES_GCM,
					.key = key,
					.key_len = key_len,
					.tag_len = (unsigned)tag_len };
	uint32_t sid;
	struct cc_queue *q;
	if ((err = cc_session_create(c, &sp, &sid)) ||
	    (err = cc_queue_open(c, NULL, &q))) {
		fprintf(stderr, "session/queue: %s\n", cc_strerror(err));
		cc_disconnect(c);
		return 1;
	}
	uint8_t *buf = cc_buf_alloc(q, len);
	uint8_t *a = cc_buf_alloc(q, aad_len ? aad_len : 1);
	uint8_t *t = cc_buf_alloc(q, 16);
	memcpy(buf, pt, len);
	memcpy(a, aad, aad_len);
	struct cc_op op = { .user_data = 1,
			    .session = sid,
			    .dir = CC_ENCRYPT,
			    .src = buf,
			    .len = (uint32_t)len,
			    .aad = a,
			    .aad_len = (uint32_t)aad_len,
			    .tag = t,
			    .iv = iv,
			    .iv_len = (unsigned)iv_len };
	struct cc_completion done;
	int rc = 1;
	if (cc_enqueue_burst(q, &op, 1) != 1)
		goto out;
	while (cc_dequeue_burst(q, &done, 1) == 0)
		if (cc_wait(q, 10000) <= 0)
			goto out;
	if (done.status != CC_OK || memcmp(buf, ct, len) ||
	    memcmp(t, tag, tag_len)) {
		fprintf(stderr, "encrypt: status %s, output %s\n",
			cc_strerror(done.status),
			memcmp(buf, ct, len) ? "differs" : "ciphertext ok");
		goto out;
	}

	/* Decrypt with a corrupted tag: refused, output zeroed. */
	t[0] ^= 1;
	op.dir = CC_DECRYPT;
	op.user_data = 2;
	if (cc_enqueue_burst(q, &op, 1) != 1)
		goto out;
	while (cc_dequeue_burst(q, &done, 1) == 0)
		if (cc_wait(q, 10000) <= 0)
			goto out;
	if (done.status != CC_ERR_AUTH_FAILED) {
		fprintf(stderr, "bad tag accepted: %s\n",
			cc_strerror(done.status));
		goto out;
	}
	printf("NIST GCM vector ok through %s (daemon %s)\n", argv[1],
	       cc_daemon_version(c));
	rc = 0;
out:
	cc_queue_close(q);
	cc_disconnect(c);
	return rc;
}
