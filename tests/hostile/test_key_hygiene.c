/* SPDX-License-Identifier: MIT */
/*
 * Key hygiene: a canary key must not survive its session in the daemon's
 * memory, and must never reach its log or its stats.
 *
 * The daemon's whole address space is scanned through /proc/PID/mem.
 * While the sessions live the canary is found (AES key schedules begin
 * with the key, OpenSSL's engine keeps it raw; MAC sessions of both
 * engines, with messages short and long, hold it as well): that proves the scanner
 * sees key memory. After the sessions are destroyed, after session-less
 * ops that carried the canary, and after the client is gone, it must be
 * found nowhere: not in the key store, not in control-message buffers,
 * not in protobuf-c's heap copies, not in the worker's scratch slots.
 *
 * "Found" means any 8 bytes in a row of any key or auth key: the first
 * bytes of a freed heap block are overwritten by the allocator's own
 * pointers, so a scan for a key's head alone misses the rest of it.
 * Keys also travel by hand-made packets: a CreateSession whose Envelope
 * carries a second oneof member after it (the parser frees the first),
 * and one the daemon refuses.
 *
 * Each scan is one pass for all the keys it looks for (memscan.c says
 * what it reads): every byte of application memory in every build; under
 * TSan not the runtime's shadow, which holds no program data. The ASan
 * build, whose allocator quarantines freed blocks, is the strict one for
 * a block freed unwiped. The scans after the end are repeated for up to
 * CLEAN_MS until nothing is found: what the daemon wipes when it notices
 * the hang-ups is not left behind, however slow the machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fixture.h"
#include "memscan.h"
#include "rawclient.h"

enum { CLEAN_MS = 10000 };

static uint8_t canary[32], auth_canary[64], raw_canary[32], raw_auth[64];

/* Does the file contain these n bytes anywhere? */
static int file_has(const char *path, const void *needle, size_t n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	static char buf[1 << 20];
	size_t len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return memmem(buf, len, needle, n) != NULL;
}

/* Keys through hand-made packets: what libcryptoclient never sends. */
static int raw_key_paths(const char *sock)
{
	struct raw r;
	raw_connect(&r, sock);
	raw_hello(&r, CRD_ABI_VERSION);

	/* A CreateSession (HMAC-SHA1 with a 64-byte auth key) followed in
	 * the same Envelope by a StatsRequest: the parser keeps the last
	 * oneof member and frees the session request, keys and all. */
	Cryptod__CreateSession cs = CRYPTOD__CREATE_SESSION__INIT;
	cs.alg = CRYPTOD__ALGORITHM__ALG_AES_CBC_HMAC_SHA1;
	cs.key.data = raw_canary;
	cs.key.len = 16;
	cs.auth_key.data = raw_auth;
	cs.auth_key.len = 64;
	cs.tag_len = 12;
	Cryptod__Envelope a = CRYPTOD__ENVELOPE__INIT;
	a.seq = ++r.seq;
	a.body_case = CRYPTOD__ENVELOPE__BODY_CREATE_SESSION;
	a.create_session = &cs;
	Cryptod__StatsRequest sr = CRYPTOD__STATS_REQUEST__INIT;
	Cryptod__Envelope b = CRYPTOD__ENVELOPE__INIT;
	b.seq = a.seq;
	b.body_case = CRYPTOD__ENVELOPE__BODY_STATS_REQUEST;
	b.stats_request = &sr;
	uint8_t pkt[1024];
	size_t la = cryptod__envelope__pack(&a, pkt);
	size_t lb = cryptod__envelope__pack(&b, pkt + la);
	if (send(r.fd, pkt, la + lb, 0) != (ssize_t)(la + lb))
		return -1;
	explicit_bzero(pkt, sizeof(pkt));
	ssize_t n = raw_recv(&r, NULL, NULL);
	Cryptod__Envelope *rep = n > 0 ? wire_decode(r.rx, (size_t)n) : NULL;
	int ok = rep && rep->body_case == CRYPTOD__ENVELOPE__BODY_STATS_REPLY;
	wire_free(rep);
	if (!ok) {
		fprintf(stderr, "FAIL: the merged Envelope was not served as "
				"a stats request\n");
		return -1;
	}

	/* A CreateSession the daemon refuses (bad tag length): the keys it
	 * carried must go as well. */
	cs.tag_len = 3;
	a.seq = ++r.seq;
	rep = raw_call(&r, &a, NULL, NULL);
	ok = rep->body_case == CRYPTOD__ENVELOPE__BODY_ERROR;
	wire_free(rep);
	close(r.fd);
	return ok ? 0 : -1;
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

int main(void)
{
	int fails = 0;
	FILE *ur = fopen("/dev/urandom", "r");
	if (!ur || fread(canary, 1, sizeof(canary), ur) != sizeof(canary) ||
	    fread(auth_canary, 1, sizeof(auth_canary), ur) !=
		    sizeof(auth_canary) ||
	    fread(raw_canary, 1, sizeof(raw_canary), ur) !=
		    sizeof(raw_canary) ||
	    fread(raw_auth, 1, sizeof(raw_auth), ur) != sizeof(raw_auth))
		return FX_EXIT_FAIL;
	fclose(ur);
	if (access("/proc/self/mem", R_OK))
		return FX_EXIT_SKIP;

	/* The daemon's log goes to a file we read afterwards. */
	char logpath[] = "/tmp/cryptod-keytest.XXXXXX";
	int logfd = mkstemp(logpath);
	if (logfd < 0)
		return FX_EXIT_FAIL;
	int saved = dup(2);
	dup2(logfd, 2);
	struct fx_daemon d;
	struct fx_daemon_params dp = { .workers = 2, .log_level = "debug" };
	int r = fx_daemon_start(&d, &dp);
	dup2(saved, 2);
	close(saved);
	if (r)
		return FX_EXIT_FAIL;

	struct cc_conn *c;
	struct cc_queue *q;
	if (cc_connect(d.sock, "key-hygiene", &c) || cc_queue_open(c, NULL, &q))
		return FX_EXIT_FAIL;

	/* Sessions on every engine that holds key material differently. */
	struct cc_session_params sp[] = {
		{ .alg = CC_ALG_AES_GCM, .key = canary, .key_len = 32 },
		{ .alg = CC_ALG_AES_CBC,
		  .key = canary,
		  .key_len = 32,
		  .engine = "openssl" },
		{ .alg = CC_ALG_AES_CBC_HMAC_SHA256,
		  .key = canary,
		  .key_len = 16,
		  .auth_key = auth_canary,
		  .auth_key_len = 32 },
		{ .alg = CC_ALG_AES_CBC_HMAC_SHA1,
		  .key = canary,
		  .key_len = 16,
		  .auth_key = auth_canary,
		  .auth_key_len = 64 },
		/* ipsec-mb's SHA-512 pads (128-byte blocks) */
		{ .alg = CC_ALG_AES_CBC_HMAC_SHA512,
		  .key = canary,
		  .key_len = 16,
		  .auth_key = auth_canary,
		  .auth_key_len = 64,
		  .engine = "aesni" },
		/* OpenSSL's HMAC contexts hold the auth key per burst. */
		{ .alg = CC_ALG_AES_CBC_HMAC_SHA512,
		  .key = canary,
		  .key_len = 32,
		  .auth_key = auth_canary,
		  .auth_key_len = 64,
		  .engine = "openssl" },
		{ .alg = CC_ALG_AES_CTR_HMAC_SHA1,
		  .key = canary,
		  .key_len = 16,
		  .auth_key = auth_canary,
		  .auth_key_len = 64,
		  .engine = "openssl" },
	};
	enum { NS = sizeof(sp) / sizeof(sp[0]) };
	uint32_t sid[NS];
	uint8_t iv[16] = { 0 }, buf[64] = { 0 }, tag[32];
	for (int i = 0; i < NS; i++) {
		if (cc_session_create(c, &sp[i], &sid[i]))
			return FX_EXIT_FAIL;
		if (cc_crypt(c, sid[i], CC_ENCRYPT, iv, i ? 16 : 12, NULL, 0,
			     buf, buf, sizeof(buf), tag))
			return FX_EXIT_FAIL;
	}
	/* Longer than an ipsec-mb job hashes: aesni MACs it with OpenSSL's
	 * HMAC(), which leaves the key on the stack unless burnt. */
	enum { BIG = 70000 };
	int on = 0; /* aesni's SHA-512 session */
	while (sp[on].alg != CC_ALG_AES_CBC_HMAC_SHA512 || !sp[on].engine ||
	       strcmp(sp[on].engine, "aesni"))
		on++;
	uint8_t *big = calloc(1, BIG);
	if (!big || cc_crypt(c, sid[on], CC_ENCRYPT, iv, 16, NULL, 0, big, big,
			     BIG, tag))
		return FX_EXIT_FAIL;
	free(big);

	/* MACs (aesni_auth.c, openssl_auth.c), after the big authenc op,
	 * whose stack burn would hide what they leave: keys kept raw, hashed,
	 * expanded or derived; a short message (a job, or EVP_MAC on a
	 * worker's context) and one longer than an ipsec-mb job (OpenSSL's
	 * one-shot MACs with the raw key). */
	struct cc_session_params mp[] = {
		{ .alg = CC_ALG_HMAC_SHA256,
		  .key = auth_canary,
		  .key_len = 64,
		  .engine = "aesni" },
		{ .alg = CC_ALG_HMAC_SHA512,
		  .key = auth_canary,
		  .key_len = 64,
		  .engine = "openssl" },
		{ .alg = CC_ALG_AES_CMAC,
		  .key = canary,
		  .key_len = 32,
		  .engine = "aesni" },
		{ .alg = CC_ALG_AES_CMAC,
		  .key = canary,
		  .key_len = 32,
		  .engine = "openssl" },
		{ .alg = CC_ALG_AES_XCBC_MAC,
		  .key = canary,
		  .key_len = 16,
		  .engine = "aesni" },
		{ .alg = CC_ALG_AES_XCBC_MAC,
		  .key = canary,
		  .key_len = 16,
		  .engine = "openssl" },
	};
	enum { NM = sizeof(mp) / sizeof(mp[0]), LONG_MSG = 70000 };
	uint32_t mid[NM];
	uint8_t *msg = calloc(1, LONG_MSG), mac[64];
	if (!msg)
		return FX_EXIT_FAIL;
	for (int i = 0; i < NM; i++) {
		if (cc_session_create(c, &mp[i], &mid[i]) ||
		    cc_crypt(c, mid[i], CC_ENCRYPT, NULL, 0, NULL, 0, msg, NULL,
			     64, mac) ||
		    cc_crypt(c, mid[i], CC_ENCRYPT, NULL, 0, NULL, 0, msg, NULL,
			     LONG_MSG, mac))
			return FX_EXIT_FAIL;
	}
	free(msg);

	struct memscan_needle live[] = {
		{ .key = canary, .len = sizeof(canary) },
		{ .key = auth_canary, .len = sizeof(auth_canary) },
	};
	if (memscan(d.pid, live, sizeof(live) / sizeof(live[0])) < 0)
		return FX_EXIT_FAIL;
	printf("while the sessions live: canary found %ld times, auth canary "
	       "%ld times\n",
	       live[0].hits, live[1].hits);
	if (live[0].hits <= 0 || live[1].hits <= 0) {
		fprintf(stderr, "FAIL: the scanner does not see key memory\n");
		fails++;
	}

	/* Session-less ops carry the canary through a worker's scratch. */
	struct cc_sessionless *sl = cc_buf_alloc(q, sizeof(*sl));
	uint8_t *data = cc_buf_alloc(q, 128);
	memset(sl, 0, sizeof(*sl));
	sl->alg = CC_ALG_AES_GCM;
	sl->key_len = 32;
	memcpy(sl->key, canary, 32);
	struct cc_op op = { .dir = CC_ENCRYPT,
			    .src = data,
			    .len = 64,
			    .tag = data + 64,
			    .iv = iv,
			    .iv_len = 12,
			    .sessionless = sl };
	struct cc_completion comp;
	if (fx_run_burst(q, &op, 1, &comp, 5000) || comp.status)
		fails++;
	explicit_bzero(sl, sizeof(*sl)); /* the client's own copy */

	struct cc_stats st;
	if (!cc_stats_get(c, &st))
		cc_stats_free(&st);
	for (int i = 0; i < NS; i++)
		if (cc_session_destroy(c, sid[i]))
			fails++;
	for (int i = 0; i < NM; i++)
		if (cc_session_destroy(c, mid[i]))
			fails++;
	cc_queue_close(q);
	cc_disconnect(c);
	if (raw_key_paths(d.sock))
		fails++;

	struct memscan_needle end[] = {
		{ .key = canary, .len = sizeof(canary) },
		{ .key = auth_canary, .len = sizeof(auth_canary) },
		{ .key = raw_canary, .len = 16 },
		{ .key = raw_auth, .len = sizeof(raw_auth) },
	};
	if (memscan_until_clean(d.pid, end, sizeof(end) / sizeof(end[0]),
				CLEAN_MS) < 0)
		return FX_EXIT_FAIL;
	long after = end[0].hits, after_auth = end[1].hits,
	     after_raw = end[2].hits + end[3].hits;
	printf("after destroy and disconnect, %d-byte windows found: canary "
	       "%ld, auth canary %ld, keys of hand-made packets %ld\n",
	       WINDOW, after, after_auth, after_raw);
	after += after_raw;
	if ((after || after_auth) && getenv("KEYTEST_PAUSE")) {
		char h2[80];
		hex(canary, 16, h2);
		printf("daemon pid %d, canary %s: paused\n", (int)d.pid, h2);
		fflush(stdout);
		sleep(30);
	}
	if (after || after_auth) {
		fprintf(stderr, "FAIL: key material left in the daemon\n");
		fails++;
	}

	if (fx_daemon_stop(&d))
		fails++;
	char h[80];
	hex(canary, 16, h);
	if (file_has(logpath, h, strlen(h)) ||
	    file_has(logpath, canary, sizeof(canary))) {
		fprintf(stderr, "FAIL: the canary reached the log\n");
		fails++;
	}
	unlink(logpath);
	printf("%s\n", fails ? "FAILED" : "PASSED");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
