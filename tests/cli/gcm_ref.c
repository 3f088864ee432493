/* SPDX-License-Identifier: MIT */
/*
 * gcm_ref: an independent AES-GCM (OpenSSL EVP) for cross-checking
 * cryptoctl in test_cryptoctl.sh, with cryptoctl's conventions:
 *
 *   gcm_ref enc KEY IV AAD TAGLEN      <plain  >cipher||tag
 *   gcm_ref dec KEY IV AAD TAGLEN TAG  <cipher >plain   (exit 3: bad tag)
 *
 * Arguments are hex ("" for empty AAD). Exit 1 on any other error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

enum { REF_MAX = 1 << 20 };

static int unhex(const char *s, unsigned char *out, int max)
{
	int n = (int)strlen(s) / 2, i;
	unsigned v;

	if (strlen(s) % 2 || n > max)
		return -1;
	for (i = 0; i < n; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (unsigned char)v;
	}
	return n;
}

static const EVP_CIPHER *gcm_for(int key_len)
{
	switch (key_len) {
	case 16:
		return EVP_aes_128_gcm();
	case 24:
		return EVP_aes_192_gcm();
	case 32:
		return EVP_aes_256_gcm();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static unsigned char in[REF_MAX], out[REF_MAX + 16];
	unsigned char key[32], iv[128], aad[1024], tag[16];
	int key_len, iv_len, aad_len, tag_len, enc, len, n, ok;
	size_t in_len;
	EVP_CIPHER_CTX *ctx;

	if (argc < 6 || (strcmp(argv[1], "enc") && strcmp(argv[1], "dec")))
		return 1;
	enc = !strcmp(argv[1], "enc");
	key_len = unhex(argv[2], key, sizeof(key));
	iv_len = unhex(argv[3], iv, sizeof(iv));
	aad_len = unhex(argv[4], aad, sizeof(aad));
	tag_len = atoi(argv[5]);
	if (key_len < 0 || iv_len <= 0 || aad_len < 0 || tag_len < 4 ||
	    tag_len > 16 || !gcm_for(key_len))
		return 1;
	if (!enc && (argc < 7 || unhex(argv[6], tag, sizeof(tag)) != tag_len))
		return 1;
	in_len = fread(in, 1, sizeof(in), stdin);

	ctx = EVP_CIPHER_CTX_new();
	ok = ctx &&
	     EVP_CipherInit_ex(ctx, gcm_for(key_len), NULL, NULL, NULL, enc) &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, iv_len, NULL) &&
	     EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, enc) &&
	     EVP_CipherUpdate(ctx, NULL, &n, aad, aad_len) &&
	     EVP_CipherUpdate(ctx, out, &len, in, (int)in_len);
	if (ok && !enc)
		ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, tag_len,
					 tag);
	if (!ok)
		return 1;
	if (EVP_CipherFinal_ex(ctx, out + len, &n) != 1)
		return enc ? 1 : 3;
	len += n;
	if (enc) {
		if (!EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, tag_len,
					 out + len))
			return 1;
		len += tag_len;
	}
	EVP_CIPHER_CTX_free(ctx);
	return fwrite(out, 1, (size_t)len, stdout) == (size_t)len ? 0 : 1;
}
