/* SPDX-License-Identifier: MIT */
/*
 * A forked child starts the provider's state anew (prov_forked(), from
 * the atfork child handler): its locks made unheld and its counters from
 * zero, as the parent reports its own. The counters are what a test can
 * see without racing a thread for a lock: the parent's message falls
 * back to the default provider (no daemon at the socket), so its
 * "cryptod-fallbacks" is 1; the child must read 0, then 1 after a
 * message of its own, and the parent still 1 after the child. Before the
 * handler called prov_forked() the child read the parent's 1 (and a
 * child forked while another thread held the provider's lock, across a
 * connect, blocked for ever on its first op).
 *
 * Exit 0 pass, 1 fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

static OSSL_LIB_CTX *lib;
static OSSL_PROVIDER *prov;

static unsigned long long fallbacks(void)
{
	uint64_t n = ~(uint64_t)0;
	OSSL_PARAM p[] = { OSSL_PARAM_uint64("cryptod-fallbacks", &n),
			   OSSL_PARAM_END };
	if (!OSSL_PROVIDER_get_params(prov, p))
		return ~0ull;
	return (unsigned long long)n;
}

/* One AES-128-GCM message through cryptod's implementation; it falls
 * back (no daemon). 1 when it matches the default provider's. */
static int message(void)
{
	static const unsigned char key[16] = { 1 }, iv[12] = { 2 };
	unsigned char pt[100], ct[2][100], tag[2][16];
	memset(pt, 0x5a, sizeof(pt));
	const char *props[2] = { "provider=cryptod", "provider=default" };
	for (int i = 0; i < 2; i++) {
		EVP_CIPHER *c = EVP_CIPHER_fetch(lib, "AES-128-GCM", props[i]);
		EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
		int len = 0,
		    ok = c && x && EVP_EncryptInit_ex2(x, c, key, iv, NULL) &&
			 EVP_EncryptUpdate(x, ct[i], &len, pt, sizeof(pt)) &&
			 EVP_EncryptFinal_ex(x, ct[i] + len, &len) &&
			 EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16,
					     tag[i]);
		EVP_CIPHER_CTX_free(x);
		EVP_CIPHER_free(c);
		if (!ok) {
			ERR_print_errors_fp(stderr);
			return 0;
		}
	}
	return !memcmp(ct[0], ct[1], sizeof(pt)) && !memcmp(tag[0], tag[1], 16);
}

int main(void)
{
	setenv("CRYPTOD_SOCKET", "/nonexistent/cryptod-test.sock", 1);
	setenv("CRYPTOD_PROVIDER_FALLBACK", "default-provider", 1);
	lib = OSSL_LIB_CTX_new();
	OSSL_PROVIDER_set_default_search_path(lib, CRYPTOD_PROVIDER_DIR);
	prov = OSSL_PROVIDER_load(lib, "cryptod");
	if (!lib || !prov || !OSSL_PROVIDER_load(lib, "default")) {
		ERR_print_errors_fp(stderr);
		fprintf(stderr, "FAIL: cannot load the providers\n");
		return 1;
	}
	if (!message() || fallbacks() != 1) {
		fprintf(stderr,
			"FAIL: parent: message fell back %llu times, "
			"want 1\n",
			fallbacks());
		return 1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		unsigned long long at_start = fallbacks();
		int ok = message();
		unsigned long long after = fallbacks();
		if (at_start != 0 || !ok || after != 1) {
			fprintf(stderr,
				"FAIL: child: fallbacks %llu at its start (want "
				"0), %llu after its message (want 1), message "
				"%s\n",
				at_start, after, ok ? "ok" : "failed");
			_exit(1);
		}
		_exit(0);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		fprintf(stderr, "FAIL: the child (status %#x)\n", st);
		return 1;
	}
	if (fallbacks() != 1) {
		fprintf(stderr,
			"FAIL: parent: %llu fallbacks after the child, "
			"want 1\n",
			fallbacks());
		return 1;
	}
	printf("fork: the child counted from zero, the parent kept its own\n");
	return 0;
}
