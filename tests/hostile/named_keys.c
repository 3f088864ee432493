// SPDX-License-Identifier: MIT
/*
 * What the test_named_keys_* programs share (named_keys.h).
 */
#include "named_keys.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/keyctl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

int fails;

char tmp[64], keydir[128], creddir[128];
const char *args[8];
static char kd_arg[192];

int setup_dirs(void)
{
	uint8_t kek[32];

	strcpy(tmp, "/tmp/test_named_keys.XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(keydir, sizeof(keydir), "%s/keys", tmp);
	snprintf(creddir, sizeof(creddir), "%s/creds", tmp);
	if (mkdir(creddir, 0700))
		return -1;
	char p[192];
	snprintf(p, sizeof(p), "%s/kek", creddir);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0400);
	if (fd < 0 || RAND_bytes(kek, 32) != 1 || write(fd, kek, 32) != 32)
		return -1;
	close(fd);
	explicit_bzero(kek, sizeof(kek));
	setenv("CREDENTIALS_DIRECTORY", creddir, 1);
	snprintf(kd_arg, sizeof(kd_arg), "keys.dir=%s", keydir);
	args[0] = "--set";
	args[1] = "keys.kek=credential:kek";
	args[2] = "--set";
	args[3] = kd_arg;
	args[4] = NULL;
	return 0;
}

struct cc_key_spec spec(const char *name, unsigned usage, int exp,
			const uint32_t *uid)
{
	struct cc_key_spec s = {
		.name = name,
		.alg = CC_ALG_AES_GCM,
		.key_len = 32,
		.usage = usage,
		.exportable = exp,
		.uids = uid,
		.nuids = 1,
	};
	return s;
}

int session_on(struct cc_conn *c, const char *name, uint32_t version,
	       uint32_t *sid)
{
	struct cc_session_params p = { .key_name = name,
				       .key_version = version };
	return cc_session_create(c, &p, sid);
}

/* OpenSSL's AES-256-GCM of msg under key: the independent reference. */
void ossl_gcm(const uint8_t *key, const uint8_t *nonce, const uint8_t *in,
	      int n, uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int l;
	EVP_EncryptInit_ex(x, EVP_aes_256_gcm(), NULL, key, nonce);
	EVP_EncryptUpdate(x, out, &l, in, n);
	EVP_EncryptFinal_ex(x, out + l, &l);
	EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(x);
}

int ossl_unwrap(const uint8_t *wkek, const uint8_t *blob, int n, uint8_t *out)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int l = 0, f = 0;
	EVP_CIPHER_CTX_set_flags(x, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	int ok = EVP_DecryptInit_ex(x, EVP_aes_256_wrap_pad(), NULL, wkek,
				    NULL) &&
		 EVP_DecryptUpdate(x, out, &l, blob, n) &&
		 EVP_DecryptFinal_ex(x, out + l, &f);
	EVP_CIPHER_CTX_free(x);
	return ok ? l + f : -1;
}

const uint8_t iv[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
uint8_t msg[256];

/* Encrypt msg on sid; compare with OpenSSL under key (NULL: just run). */
int enc_matches(struct cc_conn *c, uint32_t sid, const uint8_t *key)
{
	uint8_t out[256], tag[16], ref[256], rtag[16];
	int err = fx_crypt(c, sid, CC_ENCRYPT, iv, 12, NULL, 0, msg, out,
			   sizeof(msg), tag);
	if (err)
		return err;
	if (!key)
		return 0;
	ossl_gcm(key, iv, msg, sizeof(msg), ref, rtag);
	return memcmp(out, ref, sizeof(out)) || memcmp(tag, rtag, 16) ? 1 : 0;
}

/* The key's bytes, learnt once through an export (the test's only
 * way to know them). */
int learn(struct cc_conn *c, const char *name, uint32_t version,
	  uint8_t key[32])
{
	uint8_t wkek[32], blob[300];
	memset(wkek, 0x77, sizeof(wkek));
	int n = cc_key_wrap(c, name, version, wkek, 32, blob, sizeof(blob));
	if (n < 0)
		return n;
	return ossl_unwrap(wkek, blob, n, key) == 32 ? 0 : -EBADMSG;
}

int nk_start(struct fx_daemon *d, struct fx_daemon_params *dp)
{
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	if (setup_dirs()) {
		perror("setup");
		return -1;
	}
	*dp = (struct fx_daemon_params){ .workers = 1, .args = args };
	return fx_daemon_start(d, dp) ? -1 : 0;
}

int nk_finish(struct fx_daemon *d)
{
	if (d && fx_daemon_stop(d))
		fails++;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fails++;
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
