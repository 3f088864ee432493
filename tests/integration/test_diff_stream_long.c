// SPDX-License-Identifier: MIT
/*
 * Streams against OpenSSL, messages longer than one op: cc_crypt() with
 * messages longer than 16 MiB (the sync call streams them), AES-XTS among
 * them, and one AES-GCM message of 1 GiB (STREAM_BIG=0 leaves it out,
 * STREAM_BIG_MIB sets its size; under sanitizers, where every size
 * shrinks, it is 64 MiB unless STREAM_BIG=1) streamed through a 64 MiB
 * arena against an incremental EVP context, encrypted and decrypted at
 * once, beside the first. A daemon with two workers (diff_stream.h).
 *
 * Exit: 0 passed, 1 failed.
 */
#include "diff_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

static void run_sync_long(struct client *c)
{
	static const struct {
		const char *var;
		size_t len;
		unsigned iv_len;
	} cases[] = {
		{ "aes-gcm-256", (16u << 20) + 12345, 12 },
		{ "aes-gcm-128", (16u << 20) + 4321,
		  128 }, /* IV in the arena */
		{ "aes-cbc-128", 17u << 20, 16 },
		{ "aes-ctr-192", (16u << 20) + 1, 16 },
		{ "chacha20-poly1305", (16u << 20) + 777, 12 },
		{ "aes-ccm-128", (16u << 20) + 99, 7 },
		{ "sha256", (16u << 20) + 1, 0 },
		{ "hmac-sha384", (17u << 20) + 3, 0 },
		{ "aes-cmac-256", (16u << 20) + 5, 0 },
		{ "null", (16u << 20) + 3, 0 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sc_var *v = sc_var_by_name(cases[i].var);
		int mac = v->kind == SC_MAC;
		struct sc_msg m;
		uint8_t tag[64 + MC_GUARD];
		uint8_t *out;
		uint32_t sid;
		char ctx[200];
		long off;
		int r;

		if (c->missing[var_index(v)])
			continue;
		if (sc_msg_make_iv(&m, v, cases[i].len, cases[i].iv_len) ||
		    m.len != cases[i].len) {
			fail(c, v->name, "OpenSSL refused a message");
			sc_msg_free(&m);
			continue;
		}
		sc_msg_desc(&m, ctx, sizeof(ctx));
		strncat(ctx, " (cc_crypt)", sizeof(ctx) - strlen(ctx) - 1);
		out = malloc(m.len + MC_GUARD);
		if (!out || sc_session(c->conn, &m, &sid)) {
			fail(c, ctx, "set-up");
			free(out);
			sc_msg_free(&m);
			continue;
		}
		memset(out, MC_CANARY, m.len + MC_GUARD);
		memset(tag, MC_CANARY, sizeof(tag));
		r = fx_crypt(c->conn, sid, CC_ENCRYPT, m.iv, m.iv_len,
			     m.aad_len ? m.aad : NULL, m.aad_len, m.pt,
			     mac ? NULL : out, m.len, m.tag_len ? tag : NULL);
		c->checked++;
		if (r == -EOPNOTSUPP) {
			note_missing(c, v);
		} else if (r) {
			fail(c, ctx, "encrypt: %d (%s)", r, cc_strerror(r));
		} else if (!mac &&
			   (off = mc_first_diff(out, m.ct, m.len)) >= 0) {
			fail(c, ctx, "encrypt: output differs at byte %ld",
			     off);
		} else if (!mac && mc_first_not(out + m.len, MC_CANARY,
						MC_GUARD) >= 0) {
			fail(c, ctx, "encrypt: wrote past the output");
		} else if (m.tag_len &&
			   mc_first_diff(tag, m.tag, m.tag_len) >= 0) {
			fail(c, ctx, "encrypt: tag differs from OpenSSL");
		} else {
			/* decrypt in place, then a forgery */
			if (!mac)
				memcpy(out, m.ct, m.len);
			memcpy(tag, m.tag, m.tag_len);
			r = fx_crypt(c->conn, sid, CC_DECRYPT, m.iv, m.iv_len,
				     m.aad_len ? m.aad : NULL, m.aad_len,
				     mac ? m.pt : out, mac ? NULL : out, m.len,
				     m.tag_len ? tag : NULL);
			c->checked++;
			if (r)
				fail(c, ctx, "decrypt: %d (%s)", r,
				     cc_strerror(r));
			else if (!mac &&
				 (off = mc_first_diff(out, m.pt, m.len)) >= 0)
				fail(c, ctx,
				     "decrypt: output differs at byte %ld",
				     off);
			if (m.tag_len) {
				if (!mac)
					memcpy(out, m.ct, m.len);
				mc_flip(tag, mc_below(8 * m.tag_len));
				r = fx_crypt(c->conn, sid, CC_DECRYPT, m.iv,
					     m.iv_len, m.aad_len ? m.aad : NULL,
					     m.aad_len, mac ? m.pt : out,
					     mac ? NULL : out, m.len, tag);
				c->checked++;
				if (r != CC_ERR_AUTH_FAILED)
					fail(c, ctx, "forgery: %d (%s)", r,
					     cc_strerror(r));
				else if (!mac && (off = mc_first_not(
							  out, 0, m.len)) >= 0)
					fail(c, ctx,
					     "forgery: output not zeroed "
					     "(byte %ld of %zu)",
					     off, m.len);
			}
		}
		printf("client %u: cc_crypt %s: done\n", c->id, ctx);
		cc_session_destroy(c->conn, sid);
		free(out);
		sc_msg_free(&m);
	}
}

/* cc_crypt() of AES-XTS past 16 MiB: -E2BIG (its one-shot op is one data
 * unit), as cryptoclient.h says. */
static void run_sync_xts_long(struct client *c)
{
	const struct sc_var *v = sc_var_by_name("aes-xts-128");
	size_t len = (16u << 20) + 16;
	uint8_t *buf = calloc(1, len);
	struct sc_msg m;
	uint32_t sid;
	int r;

	if (!buf || sc_msg_make(&m, v, 64) || sc_session(c->conn, &m, &sid)) {
		fail(c, v->name, "set-up");
		free(buf);
		sc_msg_free(&m);
		return;
	}
	r = fx_crypt(c->conn, sid, CC_ENCRYPT, m.iv, 16, NULL, 0, buf, buf, len,
		     NULL);
	c->checked++;
	if (r != -E2BIG)
		fail(c, "aes-xts-128 (cc_crypt)",
		     "%zu bytes: %d (%s), want -E2BIG", len, r, cc_strerror(r));
	cc_session_destroy(c->conn, sid);
	sc_msg_free(&m);
	free(buf);
}

/* ---- Clients ---- */

/* ---- The long message ---- */

#define BIG_SLOTS 24
#define BIG_PIECE (1u << 20)

struct big_op {
	int dec;
	unsigned slot;
	uint32_t len;
	unsigned flags;
	uint64_t piece;
};

/* AES-GCM-256 of mib MiB (plus a few bytes), encrypted and decrypted as
 * two streams in one queue at once: piece k of the decryption (in place
 * on piece k's ciphertext) goes in once piece k of the encryption has
 * completed and matched an incremental EVP context. */
static int run_big(const struct fx_daemon *d, uint64_t mib)
{
	struct cc_queue_params qp = {
		.sq_entries = SQ_ENTRIES,
		.arena_size = ARENA,
	};
	struct client c = { .id = 99 };
	struct cc_queue *q;
	uint64_t total = (mib << 20) + 13, enc_off = 0, dec_off = 0;
	uint64_t enc_done = 0;
	uint64_t t0 = fx_now_ms(), enc_pieces = 0, dec_pieces = 0;
	uint8_t key[32], iv[12], aad[1000], reftag[16], fin[16];
	uint8_t *src[BIG_SLOTS], *dst[BIG_SLOTS], *tag_enc, *tag_dec, *aad_a,
		*ref = malloc(BIG_PIECE);
	unsigned free_slots[BIG_SLOTS], nfree = 0;
	struct big_op fifo[2 * BIG_SLOTS + 4];
	unsigned fhead = 0, ftail = 0; /* in flight, submission order */
	struct cc_op pend[2 * BIG_SLOTS + 4];
	struct big_op pend_b[2 * BIG_SLOTS + 4];
	unsigned npend = 0;
	uint32_t sid, he, hd;
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	/* STREAM_BIG_NULL=1: the null algorithm (a copy), to measure or
	 * check the stream machinery alone */
	const char *nv = getenv("STREAM_BIG_NULL");
	int null = nv && !strcmp(nv, "1");
	struct cc_session_params sp = {
		.alg = null ? CC_ALG_NULL : CC_ALG_AES_GCM,
		.key = null ? NULL : key,
		.key_len = null ? 0 : 32,
	};
	int r, outl, done = 0, enc_last_done = 0;
	unsigned i;

	mc_srand(seed ^ 0xb16b16b16ull);
	mc_rnd_bytes(key, sizeof(key));
	mc_rnd_bytes(iv, sizeof(iv));
	mc_rnd_bytes(aad, sizeof(aad));
	r = cc_connect(d->sock, "test_diff_stream big", &c.conn);
	if (!r)
		r = cc_queue_open(c.conn, &qp, &q);
	if (!r)
		r = cc_session_create(c.conn, &sp, &sid);
	if (r || !x || !ref) {
		fprintf(stderr, "FAIL big: set-up: %s\n", cc_strerror(r));
		return FX_EXIT_FAIL;
	}
	if (!EVP_EncryptInit_ex(x, EVP_aes_256_gcm(), NULL, key, iv) ||
	    !EVP_EncryptUpdate(x, NULL, &outl, aad, sizeof(aad))) {
		fprintf(stderr, "FAIL big: OpenSSL\n");
		return FX_EXIT_FAIL;
	}
	for (i = 0; i < BIG_SLOTS; i++) {
		src[i] = cc_buf_alloc(q, BIG_PIECE);
		dst[i] = cc_buf_alloc(q, BIG_PIECE);
		if (!src[i] || !dst[i]) {
			fprintf(stderr, "FAIL big: arena\n");
			return FX_EXIT_FAIL;
		}
		free_slots[nfree++] = i;
	}
	tag_enc = cc_buf_alloc(q, 64);
	tag_dec = cc_buf_alloc(q, 64);
	aad_a = cc_buf_alloc(q, sizeof(aad));
	if (!tag_enc || !tag_dec || !aad_a || cc_stream_handle_get(q, &he) ||
	    cc_stream_handle_get(q, &hd)) {
		fprintf(stderr, "FAIL big: arena or handles\n");
		return FX_EXIT_FAIL;
	}
	memcpy(aad_a, aad, sizeof(aad));
	memset(tag_enc, MC_CANARY, 64);

	while (!done && !c.fatal) {
		struct cc_completion comps[2 * BIG_SLOTS];

		/* new encryption pieces into free slots */
		while (nfree && enc_off < total) {
			unsigned s = free_slots[--nfree];
			uint32_t len = mc_below(2) ? BIG_PIECE
						   : 1 + mc_below(BIG_PIECE);
			unsigned flags = 0;

			if (len > total - enc_off)
				len = (uint32_t)(total - enc_off);
			if (!enc_off)
				flags |= CC_STREAM_FIRST;
			if (enc_off + len == total)
				flags |= CC_STREAM_LAST;
			mc_rnd_bytes(src[s], len);
			pend[npend] = (struct cc_op){
				.user_data = enc_pieces << 1,
				.session = sid,
				.dir = CC_ENCRYPT,
				.src = src[s],
				.dst = dst[s],
				.len = len,
				.stream = he,
				.stream_flags = flags,
			};
			if (flags & CC_STREAM_FIRST) {
				pend[npend].iv = iv;
				pend[npend].iv_len = sizeof(iv);
				pend[npend].aad = aad_a;
				pend[npend].aad_len = sizeof(aad);
			}
			if (flags & CC_STREAM_LAST)
				pend[npend].tag = tag_enc;
			pend_b[npend++] = (struct big_op){ 0, s, len, flags,
							   enc_pieces++ };
			enc_off += len;
		}
		if (npend) {
			r = cc_enqueue_burst(q, pend, npend);
			if (r < 0) {
				fail(&c, "big", "enqueue: %s", cc_strerror(r));
				c.fatal = 1;
				break;
			}
			for (i = 0; i < (unsigned)r; i++)
				fifo[ftail++ % (2 * BIG_SLOTS + 4)] = pend_b[i];
			memmove(pend, pend + r, (npend - r) * sizeof(pend[0]));
			memmove(pend_b, pend_b + r,
				(npend - r) * sizeof(pend_b[0]));
			npend -= (unsigned)r;
		}
		r = cc_dequeue_burst(q, comps, 2 * BIG_SLOTS);
		if (r < 0) {
			fail(&c, "big", "dequeue: %s", cc_strerror(r));
			break;
		}
		if (r == 0) {
			if (cc_wait(q, 10000) <= 0) {
				fail(&c, "big", "no completion in 10 s");
				c.fatal = 1;
			}
			continue;
		}
		for (int j = 0; j < r && !c.fatal; j++) {
			struct big_op b = fifo[fhead++ % (2 * BIG_SLOTS + 4)];
			uint64_t want_ud = b.piece << 1 | (unsigned)b.dec;
			long off;

			c.checked++;
			if (b.piece == 0 && !b.dec &&
			    comps[j].status == -EOPNOTSUPP) {
				note_missing(&c, sc_var_by_name(
							 null ? "null"
							      : "aes-gcm-256"));
				c.fatal = 1;
				break;
			}
			if (comps[j].user_data != want_ud ||
			    comps[j].status != CC_OK || comps[j].len != b.len) {
				fail(&c, "big",
				     "%s piece %llu (%u bytes, flags %u): "
				     "user_data 0x%llx (want 0x%llx), status "
				     "%d (%s), len %u",
				     b.dec ? "decrypt" : "encrypt",
				     (unsigned long long)b.piece, b.len,
				     b.flags,
				     (unsigned long long)comps[j].user_data,
				     (unsigned long long)want_ud,
				     comps[j].status,
				     cc_strerror(comps[j].status),
				     comps[j].len);
				c.fatal = 1;
				break;
			}
			if (!b.dec && null) {
				memcpy(ref, src[b.slot], b.len);
			} else if (!b.dec && (!EVP_EncryptUpdate(x, ref, &outl,
								 src[b.slot],
								 (int)b.len) ||
					      (uint32_t)outl != b.len)) {
				fail(&c, "big", "OpenSSL update");
				c.fatal = 1;
				break;
			}
			if (!b.dec) {
				off = mc_first_diff(dst[b.slot], ref, b.len);
				if (off >= 0) {
					fail(&c, "big",
					     "ciphertext of piece %llu "
					     "(message byte %llu) differs "
					     "from OpenSSL",
					     (unsigned long long)b.piece,
					     (unsigned long long)(enc_done +
								  (uint64_t)
									  off));
					c.fatal = 1;
					break;
				}
				enc_done += b.len;
				if ((b.flags & CC_STREAM_LAST) && !null) {
					if (!EVP_EncryptFinal_ex(x, fin,
								 &outl) ||
					    !EVP_CIPHER_CTX_ctrl(
						    x, EVP_CTRL_GCM_GET_TAG, 16,
						    reftag) ||
					    memcmp(tag_enc, reftag, 16)) {
						fail(&c, "big",
						     "tag of the %llu-byte "
						     "message differs from "
						     "OpenSSL",
						     (unsigned long long)total);
						c.fatal = 1;
						break;
					}
				}
				if (b.flags & CC_STREAM_LAST) {
					memcpy(tag_dec, tag_enc, 16);
					enc_last_done = 1;
				}
				/* its decryption, in place */
				pend[npend] = (struct cc_op){
					.user_data = dec_pieces << 1 | 1,
					.session = sid,
					.dir = CC_DECRYPT,
					.src = dst[b.slot],
					.len = b.len,
					.stream = hd,
					.stream_flags = b.flags,
				};
				if (b.flags & CC_STREAM_FIRST) {
					pend[npend].iv = iv;
					pend[npend].iv_len = sizeof(iv);
					pend[npend].aad = aad_a;
					pend[npend].aad_len = sizeof(aad);
				}
				if (b.flags & CC_STREAM_LAST)
					pend[npend].tag = tag_dec;
				pend_b[npend++] = (struct big_op){
					1, b.slot, b.len, b.flags, dec_pieces++
				};
			} else {
				off = mc_first_diff(dst[b.slot], src[b.slot],
						    b.len);
				if (off >= 0) {
					fail(&c, "big",
					     "decryption of piece %llu differs "
					     "from the plaintext at byte "
					     "%llu of the message",
					     (unsigned long long)b.piece,
					     (unsigned long long)(dec_off +
								  (uint64_t)
									  off));
					c.fatal = 1;
					break;
				}
				dec_off += b.len;
				free_slots[nfree++] = b.slot;
				if (b.flags & CC_STREAM_LAST)
					done = 1;
			}
		}
	}
	(void)enc_last_done;
	if (c.missing_n && allow_missing) {
		printf("big: skipped\n");
		c.fatal = 0;
		c.failed = 0;
	} else if (!c.fatal && dec_off != total)
		fail(&c, "big", "decrypted %llu of %llu bytes",
		     (unsigned long long)dec_off, (unsigned long long)total);
	printf("big: %s message of %llu bytes, %llu pieces each way, "
	       "encrypted and decrypted at once: %s (%llu ms)\n",
	       null ? "null" : "AES-GCM-256", (unsigned long long)total,
	       (unsigned long long)enc_pieces, c.failed ? "FAILED" : "ok",
	       (unsigned long long)(fx_now_ms() - t0));
	EVP_CIPHER_CTX_free(x);
	free(ref);
	cc_stream_handle_put(q, he);
	cc_stream_handle_put(q, hd);
	cc_queue_close(q);
	cc_session_destroy(c.conn, sid);
	cc_disconnect(c.conn);
	return c.failed || c.fatal ? FX_EXIT_FAIL : FX_EXIT_PASS;
}

/* ---- Main ---- */

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

static uint64_t big_mib;

/* Child 0: the long cc_crypt() calls on a client of its own; child 1:
 * the long message. */
static int run_long(const struct fx_daemon *d, unsigned k)
{
	struct client c;
	uint64_t t0 = fx_now_ms();

	if (k == 1)
		return run_big(d, big_mib);
	if (ds_client_open(d, 0, &c))
		return FX_EXIT_FAIL;
	run_sync_long(&c);
	if (!c.fatal)
		run_sync_xts_long(&c);
	return ds_client_close(&c, t0);
}

int main(void)
{
	char extra[64];

	/* the 1 GiB message: on by default, off under sanitizers, where a
	 * 64 MiB one still runs the pipeline (STREAM_BIG=1: 1 GiB there
	 * too; STREAM_BIG=0: none; STREAM_BIG_MIB: the size) */
	big_mib = env_u64("STREAM_BIG", 1)
			  ? env_u64("STREAM_BIG_MIB",
				    sc_sanitized() && !getenv("STREAM_BIG")
					    ? 64
					    : 1024)
			  : 0;
	snprintf(extra, sizeof(extra), "; long message: %llu MiB",
		 (unsigned long long)big_mib);
	ds_begin(extra);
	return ds_run(big_mib ? 2 : 1, run_long);
}
