/* SPDX-License-Identifier: MIT */
/*
 * Key hygiene: a canary key must not survive its session in the daemon's
 * memory, and must never reach its log or its stats.
 *
 * The daemon's whole address space is scanned through /proc/PID/mem.
 * While the sessions live the canary is found (AES key schedules begin
 * with the key, OpenSSL's engine keeps it raw): that proves the scanner
 * sees key memory. After the sessions are destroyed, after session-less
 * ops that carried the canary, and after the client is gone, it must be
 * found nowhere: not in the key store, not in control-message buffers,
 * not in protobuf-c's heap copies, not in the worker's scratch slots.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static uint8_t canary[32], auth_canary[32];

/* Count occurrences of needle (n bytes) in every readable mapping. */
static long scan_pid(pid_t pid, const uint8_t *needle, size_t n)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *maps = fopen(path, "r");
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int mem = open(path, O_RDONLY);
	if (!maps || mem < 0) {
		if (maps)
			fclose(maps);
		if (mem >= 0)
			close(mem);
		return -1;
	}
	long hits = 0;
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap + n);
	while (buf && fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char perm[8];
		/* Mappings of a GiB and more are sanitizer shadow memory
		 * (terabytes, mostly unbacked): no key lives there, and
		 * reading them would take the test's whole time. */
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 ||
		    perm[0] != 'r' || strstr(line, "[vvar]") ||
		    strstr(line, "[vsyscall]") || hi - lo >= (1ul << 30))
			continue;
		for (unsigned long a = lo; a < hi; a += cap) {
			size_t want = hi - a < cap + n ? hi - a : cap + n;
			ssize_t got = pread(mem, buf, want, (off_t)a);
			if (got < (ssize_t)n)
				continue;
			for (ssize_t i = 0; i + (ssize_t)n <= got; i++)
				if (buf[i] == needle[0] &&
				    !memcmp(buf + i, needle, n) &&
				    (size_t)i < cap)
					hits++;
		}
	}
	free(buf);
	fclose(maps);
	close(mem);
	return hits;
}

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
		    sizeof(auth_canary))
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
	};
	uint32_t sid[3];
	uint8_t iv[16] = { 0 }, buf[64] = { 0 }, tag[16];
	for (int i = 0; i < 3; i++) {
		if (cc_session_create(c, &sp[i], &sid[i]))
			return FX_EXIT_FAIL;
		if (cc_crypt(c, sid[i], CC_ENCRYPT, iv, i ? 16 : 12, NULL, 0,
			     buf, buf, sizeof(buf), tag))
			return FX_EXIT_FAIL;
	}
	long live = scan_pid(d.pid, canary, 16);
	printf("canary found %ld times in the daemon while its sessions live\n",
	       live);
	if (live <= 0) {
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
	for (int i = 0; i < 3; i++)
		if (cc_session_destroy(c, sid[i]))
			fails++;
	cc_queue_close(q);
	cc_disconnect(c);
	usleep(200000); /* the daemon notices the hang-up */

	long after = scan_pid(d.pid, canary, 16);
	long after_auth = scan_pid(d.pid, auth_canary, 16);
	printf("after destroy and disconnect: canary %ld, auth canary %ld\n",
	       after, after_auth);
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
