/* SPDX-License-Identifier: MIT */
/*
 * The one list of algorithms and op statuses. Everything else derives from
 * it: the ring ABI's enum crd_alg and enum crd_status and the facts
 * ring_abi.h's crd_alg_*() helpers give (bit lengths, SHA index,
 * auth-only, keystream, streams, the halves of authenc, usage class),
 * libcryptoclient's enum cc_alg and enum cc_status (cryptoclient.h, with
 * _Static_asserts that the two agree), the name table behind
 * cc_alg_name()/cc_alg_from_name() and crd_alg_ossl_name() that the
 * daemon, cryptoctl, the provider and the benchmark all use,
 * cc_strerror()'s texts, and the control protocol's Algorithm enum, which
 * tests/unit/test_proto_algs checks against this list (and
 * tests/unit/test_alg_table the facts). Adding an algorithm is one row
 * here (and one per engine that runs it).
 *
 * CRD_ALGORITHMS(X): X(ID, number, name, kernel crypto API name or NULL,
 *                      default tag bytes, kind, flags, sha, cipher, use,
 *                      OpenSSL name)
 * kind (enum crd_alg_kind, CRD_KIND_<kind>): AEAD (a cipher and a tag),
 *   CIPHER (no tag), AUTHENC (a cipher and a MAC with its own auth_key),
 *   MAC (keyed, authentication only: a tag over the data, nothing
 *   written; encrypt generates, decrypt verifies), HASH (as MAC with no
 *   key), PKEY (a public-key pair: sign, verify, derive, or RSA's
 *   encrypt and decrypt, as its flags say; docs/asymmetric.md), NONE.
 * flags (enum crd_alg_flag, CRD_AF_*, or 0): BITS (an op's length counts
 *   bits), KEYSTREAM (the cipher XORs a keystream made from the key and a
 *   client IV: encrypt and decrypt are one operation, keyreq.c, and a
 *   decrypt-only AEAD key must not stream, streams.c), STREAM (some
 *   engine runs it as a stream of pieces), TWO_KEYS (the key is two AES
 *   keys of equal size: XTS), IV (it takes an IV), SALT (the key is an
 *   AES key and a 4-byte salt: RFC 4106), CHAINED (each block's work
 *   waits for the one before: CBC encryption, CBC-MACs, SHA-2, key
 *   wrap; an engine walks the buffer one line after another, so the
 *   worker asks for its lines first, worker.c).
 * sha (CRD_SHA_<sha>): the SHA an HMAC, digest or authenc row runs: 1,
 *   224, 256, 384, 512, or NO.
 * cipher (CRD_ALG_<cipher>): an authenc row's cipher half (its MAC half
 *   is HMAC with its sha), or NO.
 * use (CRD_USE_<use>): the usage class of a named key of the algorithm:
 *   CIPHER (encrypt, decrypt), MAC (mac-generate, mac-verify), PKEY (the
 *   ops its flags name: sign, verify, derive, decrypt, encrypt), or NO
 *   (no named key: no key, or two).
 * OpenSSL name: the EVP cipher (or digest) that does the work, '*'
 *   standing for the bits of one AES key ("AES-*-GCM" at 16 bytes:
 *   "AES-128-GCM"); a PKEY row's is the EVP_PKEY type and its one
 *   parameter, "TYPE:PARAM" (the RSA modulus bits, the EC group) or
 *   "TYPE"; NULL where OpenSSL has none.
 * Use ID, cipher and sha only with ## or # (the ID NULL would expand
 * otherwise). The numbers are wire values: never reuse or renumber one.
 */
#ifndef CRYPTOD_ALGS_H
#define CRYPTOD_ALGS_H

/* The flags column. */
enum crd_alg_flag {
	CRD_AF_BITS = 1,
	CRD_AF_KEYSTREAM = 2,
	CRD_AF_STREAM = 4,
	CRD_AF_TWO_KEYS = 8,
	CRD_AF_IV = 16,
	CRD_AF_SALT = 32,
	CRD_AF_SIGN = 64,
	CRD_AF_DIGEST = 128,
	CRD_AF_DERIVE = 256,
	CRD_AF_PKE = 512,
	CRD_AF_CHAINED = 1024,
};
#define CRD_AF_KS_STREAM (CRD_AF_KEYSTREAM | CRD_AF_STREAM)
#define CRD_AF_3GPP_KS (CRD_AF_BITS | CRD_AF_KEYSTREAM)
#define CRD_AF_RSA (CRD_AF_SIGN | CRD_AF_DIGEST | CRD_AF_PKE)
#define CRD_AF_EC (CRD_AF_SIGN | CRD_AF_DIGEST | CRD_AF_DERIVE)

/* clang-format off */
#define CRD_ALGORITHMS(X)                                                      \
	/* AEAD; key 16/24/32; IV 12 (1..128 where the engine's row says so:   \
	 * others are GHASHed into J0); tag 4, 8, 12..16 */                    \
	X(AES_GCM, 1, "aes-gcm", "gcm(aes)", 16, AEAD,                         \
	  CRD_AF_KS_STREAM | CRD_AF_IV,                                        \
	  NO, NO, CIPHER, "AES-*-GCM")                                         \
	/* copies src to dst; no key, no tag: the service's own overhead */    \
	X(NULL, 2, "null", "ecb(cipher_null)", 0, NONE, CRD_AF_STREAM,         \
	  NO, NO, NO, NULL)                                                    \
	/* authentication only: a GCM tag over src, nothing written; IVs as    \
	 * AES_GCM's */                                                        \
	X(AES_GMAC, 3, "aes-gmac", NULL, 16, MAC, CRD_AF_IV,                   \
	  NO, NO, MAC, "AES-*-GCM")                                            \
	/* key 16/24/32; IV 16; length % 16 == 0 */                            \
	X(AES_CBC, 4, "aes-cbc", "cbc(aes)", 0, CIPHER,                        \
	  CRD_AF_STREAM | CRD_AF_IV | CRD_AF_CHAINED,                                           \
	  NO, NO, CIPHER, "AES-*-CBC")                                         \
	/* key 16/24/32; IV 16 (the full counter block) */                     \
	X(AES_CTR, 5, "aes-ctr", "ctr(aes)", 0, CIPHER,                        \
	  CRD_AF_KS_STREAM | CRD_AF_IV,                                        \
	  NO, NO, CIPHER, "AES-*-CTR")                                         \
	/* key 16/24/32; no IV; length % 16 == 0 */                            \
	X(AES_ECB, 6, "aes-ecb", "ecb(aes)", 0, CIPHER, CRD_AF_STREAM,         \
	  NO, NO, CIPHER, "AES-*-ECB")                                         \
	/* key 32/64 (two halves; equal halves make a decrypt-only session,   \
	 * as OpenSSL's default provider reads but never writes with them);    \
	 * IV 16 = tweak; length >= 16 */                                      \
	X(AES_XTS, 7, "aes-xts", "xts(aes)", 0, CIPHER,                        \
	  CRD_AF_STREAM | CRD_AF_TWO_KEYS | CRD_AF_IV, NO, NO, CIPHER,         \
	  "AES-*-XTS")                                                         \
	/* IPsec ESP style, as the kernel's authenc(hmac(H),cbc(aes)):         \
	 * encrypt-then-MAC over aad || ciphertext, verify-then-decrypt;       \
	 * auth_key is the HMAC key; ICV 12 (SHA-1) or 16 (SHA-256) */         \
	X(AES_CBC_HMAC_SHA1, 8, "aes-cbc-hmac-sha1",                           \
	  "authenc(hmac(sha1),cbc(aes))", 12, AUTHENC, CRD_AF_IV | CRD_AF_CHAINED,              \
	  1, AES_CBC, NO, "AES-*-CBC")                                         \
	X(AES_CBC_HMAC_SHA256, 9, "aes-cbc-hmac-sha256",                       \
	  "authenc(hmac(sha256),cbc(aes))", 16, AUTHENC, CRD_AF_IV | CRD_AF_CHAINED,            \
	  256, AES_CBC, NO, "AES-*-CBC")                                       \
	/* authenc with a null digest: CBC, no tag */                          \
	X(AES_CBC_NULL, 10, "aes-cbc-null", "authenc(digest_null,cbc(aes))",   \
	  0, CIPHER, CRD_AF_IV | CRD_AF_CHAINED, NO, NO, CIPHER, "AES-*-CBC")                   \
	/* IEEE 1619 LRW; key 32/40/48; IV 16; kernel engine only */           \
	X(AES_LRW, 11, "aes-lrw", "lrw(aes)", 0, CIPHER, CRD_AF_IV,            \
	  NO, NO, CIPHER, NULL)                                                \
	/* RFC 4106 ESP GCM: key = AES key || 4-byte salt, IV 8 bytes (nonce   \
	 * = salt || IV), AAD 8 or 12 bytes (SPI || sequence number); tag      \
	 * 8, 12 or 16 */                                                      \
	X(AES_GCM_RFC4106, 12, "aes-gcm-rfc4106", "rfc4106(gcm(aes))", 16,     \
	  AEAD, CRD_AF_KEYSTREAM | CRD_AF_IV | CRD_AF_SALT, NO, NO, CIPHER,    \
	  "AES-*-GCM")                                                         \
	/* NIST SP 800-38C / RFC 3610; key 16/24/32; nonce (the IV) 7..13;     \
	 * tag 4..16 even; AAD up to CRD_AAD_MAX */                            \
	X(AES_CCM, 13, "aes-ccm", NULL, 16, AEAD,                              \
	  CRD_AF_KS_STREAM | CRD_AF_IV | CRD_AF_CHAINED,                                        \
	  NO, NO, CIPHER, "AES-*-CCM")                                         \
	/* RFC 8439; key 32; nonce 12; tag 16 (no truncated tags) */           \
	X(CHACHA20_POLY1305, 14, "chacha20-poly1305", NULL, 16, AEAD,          \
	  CRD_AF_KS_STREAM | CRD_AF_IV, NO, NO, CIPHER, "ChaCha20-Poly1305")   \
	/* RFC 8439 ChaCha20; key 32; IV 16 = 32-bit little-endian block       \
	 * counter || 12-byte nonce (OpenSSL's layout) */                      \
	X(CHACHA20, 15, "chacha20", NULL, 0, CIPHER,                           \
	  CRD_AF_KEYSTREAM | CRD_AF_IV,                                        \
	  NO, NO, CIPHER, "ChaCha20")                                          \
	/* HMAC (RFC 2104); key any length up to CTL_KEY_MAX (longer than a    \
	 * block: hashed first); tag = the digest, or truncated to >= 4 */     \
	X(HMAC_SHA1, 16, "hmac-sha1", NULL, 20, MAC, CRD_AF_STREAM | CRD_AF_CHAINED,            \
	  1, NO, MAC, "SHA1")                                                  \
	X(HMAC_SHA224, 17, "hmac-sha224", NULL, 28, MAC, CRD_AF_STREAM | CRD_AF_CHAINED,        \
	  224, NO, MAC, "SHA224")                                              \
	X(HMAC_SHA256, 18, "hmac-sha256", NULL, 32, MAC, CRD_AF_STREAM | CRD_AF_CHAINED,        \
	  256, NO, MAC, "SHA256")                                              \
	X(HMAC_SHA384, 19, "hmac-sha384", NULL, 48, MAC, CRD_AF_STREAM | CRD_AF_CHAINED,        \
	  384, NO, MAC, "SHA384")                                              \
	X(HMAC_SHA512, 20, "hmac-sha512", NULL, 64, MAC, CRD_AF_STREAM | CRD_AF_CHAINED,        \
	  512, NO, MAC, "SHA512")                                              \
	/* FIPS 180-4 digests: no key; tag = the digest, or truncated */       \
	X(SHA1, 21, "sha1", NULL, 20, HASH, CRD_AF_STREAM | CRD_AF_CHAINED,                     \
	  1, NO, NO, "SHA1")                                                   \
	X(SHA224, 22, "sha224", NULL, 28, HASH, CRD_AF_STREAM | CRD_AF_CHAINED,                 \
	  224, NO, NO, "SHA224")                                               \
	X(SHA256, 23, "sha256", NULL, 32, HASH, CRD_AF_STREAM | CRD_AF_CHAINED,                 \
	  256, NO, NO, "SHA256")                                               \
	X(SHA384, 24, "sha384", NULL, 48, HASH, CRD_AF_STREAM | CRD_AF_CHAINED,                 \
	  384, NO, NO, "SHA384")                                               \
	X(SHA512, 25, "sha512", NULL, 64, HASH, CRD_AF_STREAM | CRD_AF_CHAINED,                 \
	  512, NO, NO, "SHA512")                                               \
	/* NIST SP 800-38B; key 16/24/32; tag 4..16 */                         \
	X(AES_CMAC, 26, "aes-cmac", NULL, 16, MAC, CRD_AF_STREAM | CRD_AF_CHAINED,              \
	  NO, NO, MAC, "AES-*-CBC")                                            \
	/* RFC 3566; key 16; tag 12 (the -96), or 4..16 */                     \
	X(AES_XCBC_MAC, 27, "aes-xcbc-mac", NULL, 12, MAC, CRD_AF_CHAINED,                  \
	  NO, NO, MAC, "AES-*-CBC")                                            \
	/* more ESP authenc: ICV 24 (SHA-384) and 32 (SHA-512), CTR with       \
	 * HMAC-SHA1 (ICV 12) and HMAC-SHA256 (ICV 16); IV 16 as aes-ctr */    \
	X(AES_CBC_HMAC_SHA384, 28, "aes-cbc-hmac-sha384",                      \
	  "authenc(hmac(sha384),cbc(aes))", 24, AUTHENC, CRD_AF_IV | CRD_AF_CHAINED,            \
	  384, AES_CBC, NO, "AES-*-CBC")                                       \
	X(AES_CBC_HMAC_SHA512, 29, "aes-cbc-hmac-sha512",                      \
	  "authenc(hmac(sha512),cbc(aes))", 32, AUTHENC, CRD_AF_IV | CRD_AF_CHAINED,            \
	  512, AES_CBC, NO, "AES-*-CBC")                                       \
	X(AES_CTR_HMAC_SHA1, 30, "aes-ctr-hmac-sha1",                          \
	  "authenc(hmac(sha1),ctr(aes))", 12, AUTHENC,                         \
	  CRD_AF_KEYSTREAM | CRD_AF_IV | CRD_AF_CHAINED,                                        \
	  1, AES_CTR, NO, "AES-*-CTR")                                         \
	X(AES_CTR_HMAC_SHA256, 31, "aes-ctr-hmac-sha256",                      \
	  "authenc(hmac(sha256),ctr(aes))", 16, AUTHENC,                       \
	  CRD_AF_KEYSTREAM | CRD_AF_IV | CRD_AF_CHAINED,                                        \
	  256, AES_CTR, NO, "AES-*-CTR")                                       \
	/* 3GPP (docs/algorithms.md): an op's length counts BITS (the buffers  \
	 * hold ceil(len / 8) bytes; crd_alg_bit_len()); key 16.               \
	 * UEA2: IV 16 = COUNT (4, big-endian) || BEARER << 3 | DIRECTION <<   \
	 * 2, 0, 0, 0 || the same 8 bytes again; 1..2^27 bits */               \
	X(SNOW3G_UEA2, 32, "snow3g-uea2", NULL, 0, CIPHER,                     \
	  CRD_AF_3GPP_KS | CRD_AF_IV,                                          \
	  NO, NO, CIPHER, NULL)                                                \
	/* UIA2: IV 16 = COUNT || FRESH || COUNT ^ DIRECTION << 31 ||          \
	 * FRESH ^ DIRECTION << 15 (32-bit big-endian words); tag 4 */         \
	X(SNOW3G_UIA2, 33, "snow3g-uia2", NULL, 4, MAC,                        \
	  CRD_AF_BITS | CRD_AF_IV,                                             \
	  NO, NO, MAC, NULL)                                                   \
	/* EEA3: IV 16 laid out as UEA2's; 1..65504 bits */                    \
	X(ZUC_EEA3, 34, "zuc-eea3", NULL, 0, CIPHER,                           \
	  CRD_AF_3GPP_KS | CRD_AF_IV,                                          \
	  NO, NO, CIPHER, NULL)                                                \
	/* EIA3: IV 16 = COUNT || BEARER << 3, 0, 0, 0 || COUNT ^ DIRECTION    \
	 * << 31 || BEARER << 3, 0, DIRECTION << 7, 0; tag 4; 1..65504 bits */ \
	X(ZUC_EIA3, 35, "zuc-eia3", NULL, 4, MAC, CRD_AF_BITS | CRD_AF_IV,     \
	  NO, NO, MAC, NULL)                                                   \
	/* KASUMI f8 (TS 35.201): IV 8 = COUNT || BEARER << 3 | DIRECTION <<   \
	 * 2, 0, 0, 0; 1..20000 bits */                                        \
	X(KASUMI_F8, 36, "kasumi-f8", NULL, 0, CIPHER,                         \
	  CRD_AF_3GPP_KS | CRD_AF_IV,                                          \
	  NO, NO, CIPHER, NULL)                                                \
	/* KASUMI f9: IV 8 = COUNT || FRESH; the data is MESSAGE ||            \
	 * DIRECTION (its last bit is DIRECTION, as in f9's input string);     \
	 * tag 4; 2..20001 bits */                                             \
	X(KASUMI_F9, 37, "kasumi-f9", NULL, 4, MAC, CRD_AF_BITS | CRD_AF_IV,   \
	  NO, NO, MAC, NULL)                                                   \
	/* AES key wrap, RFC 3394: key 16/24/32 (the KEK); no IV (the RFC's    \
	 * default A6A6A6A6A6A6A6A6); data a multiple of 8, 16..4096 bytes;    \
	 * tag 8 = the wrap's first semiblock: encrypt (wrap) gives tag ||     \
	 * ciphertext, the RFC's output; decrypt (unwrap) checks it */         \
	X(AES_KW, 38, "aes-kw", NULL, 8, AEAD, CRD_AF_CHAINED,                              \
	  NO, NO, CIPHER, "AES-*-WRAP")                                        \
	/* AES key wrap with padding, RFC 5649: key 16/24/32 (the KEK); no IV; \
	 * data 1..4096 bytes of key (the wrap's MLI is len); tag 8..15 = the  \
	 * first 8 + the padding's bytes of the wrap, 8 + (8 - len % 8) % 8,   \
	 * so that tag || data is the RFC's output; decrypt (unwrap) checks it \
	 * and that MLI is len */                                              \
	X(AES_KWP, 39, "aes-kwp", NULL, 8, AEAD, CRD_AF_CHAINED,                            \
	  NO, NO, CIPHER, "AES-*-WRAP-PAD")                                    \
	/* Key pairs (docs/asymmetric.md), on the openssl engine. The key is  \
	 * DER: PKCS#8 PrivateKeyInfo, or SubjectPublicKeyInfo (public ops    \
	 * only). RSA: PKCS#1 v1.5 and PSS signatures of a digest, OAEP       \
	 * encrypt and decrypt (no PKCS#1 v1.5 decryption); the tag column    \
	 * is the modulus's bytes */                                          \
	X(RSA_2048, 40, "rsa-2048", NULL, 256, PKEY, CRD_AF_RSA,               \
	  NO, NO, PKEY, "RSA:2048")                                            \
	X(RSA_3072, 41, "rsa-3072", NULL, 384, PKEY, CRD_AF_RSA,               \
	  NO, NO, PKEY, "RSA:3072")                                            \
	X(RSA_4096, 42, "rsa-4096", NULL, 512, PKEY, CRD_AF_RSA,               \
	  NO, NO, PKEY, "RSA:4096")                                            \
	/* ECDSA signatures of a digest (DER, at most the tag column's        \
	 * bytes) and ECDH (the peer's key an uncompressed point, the secret  \
	 * its x-coordinate) */                                               \
	X(EC_P256, 43, "ec-p256", NULL, 72, PKEY, CRD_AF_EC,                   \
	  NO, NO, PKEY, "EC:P-256")                                            \
	X(EC_P384, 44, "ec-p384", NULL, 104, PKEY, CRD_AF_EC,                  \
	  NO, NO, PKEY, "EC:P-384")                                            \
	X(EC_P521, 45, "ec-p521", NULL, 139, PKEY, CRD_AF_EC,                  \
	  NO, NO, PKEY, "EC:P-521")                                            \
	/* RFC 8032 pure EdDSA: the whole message is signed */                 \
	X(ED25519, 46, "ed25519", NULL, 64, PKEY, CRD_AF_SIGN,                 \
	  NO, NO, PKEY, "ED25519")                                             \
	X(ED448, 47, "ed448", NULL, 114, PKEY, CRD_AF_SIGN,                    \
	  NO, NO, PKEY, "ED448")                                               \
	/* RFC 7748: the peer's key is its raw u-coordinate */                 \
	X(X25519, 48, "x25519", NULL, 32, PKEY, CRD_AF_DERIVE,                 \
	  NO, NO, PKEY, "X25519")                                              \
	X(X448, 49, "x448", NULL, 56, PKEY, CRD_AF_DERIVE,                     \
	  NO, NO, PKEY, "X448")
/* clang-format on */

/*
 * CRD_STATUSES(X): X(ID, value, message). A completion's status is 0
 * (CRD_ST_OK, CC_OK: success), one of these, or a negative errno.
 */
#define CRD_STATUSES(X)                                                         \
	/* tag mismatch; the output was zeroed */                               \
	X(AUTH_FAILED, -1000, "authentication failed: tag mismatch")            \
	X(BAD_DESC, -1001, "malformed descriptor")                              \
	/* unknown session id for this client */                                \
	X(NO_SESSION, -1002, "unknown session")                                 \
	/* offset/length outside the arena, or overlapping */                   \
	X(BAD_RANGE, -1003, "buffer outside the arena or overlapping")          \
	/* IV/tag/AAD/length not supported */                                   \
	X(BAD_PARAM, -1004, "unsupported IV, tag, AAD or data length")          \
	X(ENGINE, -1005, "engine error")                                        \
	X(SHUTDOWN, -1006, "daemon shut down before running the op")            \
	/* refused by the daemon's key policy (cryptod.conf keys.*): also the \
	 * code of a control-call Error for the same reason */ \
	X(POLICY, -1007, "refused by cryptod's key policy")                     \
	/* not a completion status: the code of the Error a peer that the     \
	 * daemon's access policy refuses gets instead of a HelloReply */ \
	X(ACCESS, -1008, "not allowed by cryptod's access policy")              \
	/* a stream piece whose handle names no open stream: a middle or last \
	 * piece without a first, after the last, or after an error */ \
	X(NO_STREAM, -1009, "no such open stream")                              \
	/* a first piece on a stream slot that is still open */                 \
	X(STREAM_BUSY, -1010, "stream slot already open")                       \
	/* a slot past the queue's table, or the client's open streams at     \
	 * their limit */ \
	X(STREAM_LIMIT, -1011, "too many open streams")                         \
	/* a verify op whose signature does not verify (the public-key rows) */ \
	X(BAD_SIGNATURE, -1012, "signature verification failed")

#endif
