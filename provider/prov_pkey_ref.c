/* SPDX-License-Identifier: MIT */
/*
 * Key-reference files (docs/asymmetric.md, "Key-reference files"): the
 * decoder that turns what a program loads as its private key file into
 * the daemon's key pair (provider-decoder(7)). A program that only knows
 * how to read a key file (nginx's ssl_certificate_key, curl's --key,
 * Python's load_cert_chain) then signs with the daemon's key, with
 * nothing but OPENSSL_CONF naming the provider.
 *
 * The file (cryptoctl key ref NAME writes it) holds no secret:
 *
 *   -----BEGIN CRYPTOD KEY REFERENCE-----
 *   base64 of the lines
 *     cryptod-key-ref 1
 *     name NAME
 *     version N            (0: the newest)
 *     socket PATH          (the daemon's)
 *   -----END CRYPTOD KEY REFERENCE-----
 *
 * Two decoders. ref2der_decode (PEM to "DER", input=pem) takes this
 * label's armour off, as OpenSSL's pem2der does for the labels it knows
 * (it drops ours), and hands the lines on by value; ref_decode
 * (input=der, by every key type's name) turns the lines into the key
 * object, by reference as the store does. Anything else each leaves to
 * the other decoders. So PEM_read_bio_PrivateKey and
 * SSL_CTX_use_PrivateKey_file (nginx, curl, Python) load the daemon's
 * key, and so does OpenSSL's file: store (the openssl command's -key
 * and -inkey FILE): it hands our lines on to a decoder run of its own,
 * where the key comes by reference from our decoder to our key
 * management, whichever provider comes first. (A reference given to
 * the store itself would go only to the key management of the store's
 * own provider, the default one, which cannot load it.)
 */
#include "prov_pkey.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/core_object.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#define REF_MAGIC "cryptod-key-ref 1\n"
#define REF_BEGIN "-----BEGIN CRYPTOD KEY REFERENCE-----"
#define REF_END "-----END CRYPTOD KEY REFERENCE-----"
#define REF_MAX 2048 /* a reference is a few lines */

static OSSL_FUNC_BIO_read_ex_fn *c_bio_read_ex;

void prov_pkey_ref_init(const OSSL_DISPATCH *in)
{
	for (; in && in->function_id; in++)
		if (in->function_id == OSSL_FUNC_BIO_READ_EX)
			c_bio_read_ex = OSSL_FUNC_BIO_read_ex(in);
}

struct ref {
	char name[CC_KEY_NAME_MAX + 1];
	char socket[108];
	uint32_t version;
};

/* The reference in buf (n bytes), or -EINVAL when it is none. */
static int ref_parse(const char *buf, size_t n, struct ref *r)
{
	size_t m = strlen(REF_MAGIC);
	if (n < m || memcmp(buf, REF_MAGIC, m))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	for (size_t i = m; i < n;) {
		const char *l = buf + i, *e = memchr(l, '\n', n - i);
		size_t len = e ? (size_t)(e - l) : n - i;
		i += len + 1;
		char line[160];
		if (len >= sizeof(line))
			return -EINVAL;
		memcpy(line, l, len);
		line[len] = '\0';
		char *v = strchr(line, ' ');
		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(line, "name") && strlen(v) <= CC_KEY_NAME_MAX)
			strcpy(r->name, v);
		else if (!strcmp(line, "socket") &&
			 strlen(v) < sizeof(r->socket))
			strcpy(r->socket, v);
		else if (!strcmp(line, "version"))
			r->version = (uint32_t)strtoul(v, NULL, 10);
	}
	return r->name[0] ? 0 : -EINVAL;
}

static void *ref_newctx(void *provctx)
{
	return provctx; /* nothing of its own */
}

static void ref_freectx(void *vctx)
{
}

/* The key object of r, by reference, to data_cb. */
static int ref_give(struct prov *p, const struct ref *r, OSSL_CALLBACK *data_cb,
		    void *data_cbarg)
{
	/* One connection per provider: a reference to another daemon than
	 * the one the provider is configured for is refused, said. */
	char mine[108] = "";
	if (p->socket)
		snprintf(mine, sizeof(mine), "%s", p->socket);
	else
		(void)cc_default_socket_path(mine, sizeof(mine));
	if (r->socket[0] && strcmp(r->socket, mine)) {
		PROV_ERR(
			p, PROV_R_BAD_PARAM,
			"key reference %s names the daemon at %s; the provider "
			"uses %s (socket = in its openssl.cnf section)",
			r->name, r->socket, mine);
		return 0;
	}
	return prov_pkey_give(p, r->name, r->version, data_cb, data_cbarg);
}

/* Read in (at most REF_MAX bytes): the reference's lines in their PEM
 * armour or, if bare, bare (the lines ref2der_decode hands on). Into
 * body (the lines, *body_len bytes) and r; -EINVAL when it is not one. */
static int ref_read(OSSL_CORE_BIO *in, int bare, unsigned char body[REF_MAX],
		    size_t *body_len, struct ref *r)
{
	char pem[REF_MAX + 1];
	size_t n = 0, got = 0;
	if (!c_bio_read_ex)
		return -EINVAL;
	while (n < REF_MAX && c_bio_read_ex(in, pem + n, REF_MAX - n, &got) &&
	       got)
		n += got;
	pem[n] = '\0';
	if (bare && !ref_parse(pem, n, r)) {
		memcpy(body, pem, n);
		*body_len = n;
		return 0;
	}
	/* The base64 between the lines, whitespace dropped. */
	const char *b = strstr(pem, REF_BEGIN),
		   *e = b ? strstr(b, REF_END) : NULL;
	if (!e)
		return -EINVAL;
	char b64[REF_MAX];
	size_t m = 0;
	for (const char *c = b + strlen(REF_BEGIN); c < e; c++)
		if (!strchr(" \t\r\n", *c))
			b64[m++] = *c;
	int dn = m % 4 ? -1
		       : EVP_DecodeBlock(body, (unsigned char *)b64, (int)m);
	if (dn < 0)
		return -EINVAL;
	while (m && b64[m - 1] == '=' && dn) /* padding decoded as zeros */
		m--, dn--;
	*body_len = (size_t)dn;
	return ref_parse((const char *)body, *body_len, r);
}

/* The key types' decoders: a reference, armoured or bare, to the key
 * object; anything else is the next decoder's. */
static int ref_decode(void *vctx, OSSL_CORE_BIO *in, int selection,
		      OSSL_CALLBACK *data_cb, void *data_cbarg,
		      OSSL_PASSPHRASE_CALLBACK *pw_cb, void *pw_cbarg)
{
	unsigned char body[REF_MAX];
	size_t n;
	struct ref r;
	if (ref_read(in, 1, body, &n, &r))
		return 1; /* not ours: the next decoder's */
	return ref_give(vctx, &r, data_cb, data_cbarg);
}

/* PEM to "DER" for our label alone (see the top). */
static int ref2der_decode(void *vctx, OSSL_CORE_BIO *in, int selection,
			  OSSL_CALLBACK *data_cb, void *data_cbarg,
			  OSSL_PASSPHRASE_CALLBACK *pw_cb, void *pw_cbarg)
{
	unsigned char body[REF_MAX];
	size_t n;
	struct ref r;
	if (ref_read(in, 0, body, &n, &r))
		return 1;
	int type = OSSL_OBJECT_PKEY;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_int(OSSL_OBJECT_PARAM_TYPE, &type),
		OSSL_PARAM_construct_octet_string(OSSL_OBJECT_PARAM_DATA, body,
						  n),
		OSSL_PARAM_construct_end(),
	};
	return data_cb(params, data_cbarg);
}

static const OSSL_DISPATCH ref_fns[] = {
	{ OSSL_FUNC_DECODER_NEWCTX, (void (*)(void))ref_newctx },
	{ OSSL_FUNC_DECODER_FREECTX, (void (*)(void))ref_freectx },
	{ OSSL_FUNC_DECODER_DECODE, (void (*)(void))ref_decode },
	{ 0, NULL },
};
static const OSSL_DISPATCH ref2der_fns[] = {
	{ OSSL_FUNC_DECODER_NEWCTX, (void (*)(void))ref_newctx },
	{ OSSL_FUNC_DECODER_FREECTX, (void (*)(void))ref_freectx },
	{ OSSL_FUNC_DECODER_DECODE, (void (*)(void))ref2der_decode },
	{ 0, NULL },
};

#define REF_PROPS PROV_PKEY_PROPS ",input=der"
#define REF_PEM_PROPS PROV_PKEY_PROPS ",input=pem"
const OSSL_ALGORITHM prov_pkey_decoder[] = {
	{ "RSA:rsaEncryption:1.2.840.113549.1.1.1", REF_PROPS, ref_fns, NULL },
	{ "EC:id-ecPublicKey:1.2.840.10045.2.1", REF_PROPS, ref_fns, NULL },
	{ "ED25519:1.3.101.112", REF_PROPS, ref_fns, NULL },
	{ "ED448:1.3.101.113", REF_PROPS, ref_fns, NULL },
	{ "X25519:1.3.101.110", REF_PROPS, ref_fns, NULL },
	{ "X448:1.3.101.111", REF_PROPS, ref_fns, NULL },
	{ "DER", REF_PEM_PROPS, ref2der_fns, NULL },
	{ NULL, NULL, NULL, NULL },
};
