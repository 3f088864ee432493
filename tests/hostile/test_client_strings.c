/* SPDX-License-Identifier: MIT */
/*
 * Client strings cannot forge the daemon's log (issue 25). Every request
 * that carries a string (Hello.client_name, CreateSession.engine,
 * CreateSession.key_name, KeyRequest.name for show, create, rotate and
 * delete) is sent with strings made to forge: a newline followed by a
 * whole log line ("z\ncryptod[info]: keys: X deleted by uid 0\n", the
 * issue's), a newline and a journald priority "<3>", a "<3>" at the start,
 * terminal escapes (ESC [, OSC, the C1 CSI 0x9b), a carriage return, an
 * embedded NUL, and 4 KiB of all of these; by an administrator and by
 * other uids (setresuid: the non-administrator part needs root, else it
 * is skipped), whose refusals are what the daemon logs.
 *
 * The daemon's stderr goes to a file, once as a plain log and once as
 * the journal stream ($JOURNAL_STREAM names the file, so lines carry a
 * "<N>" priority). Afterwards every line must start with the daemon's
 * own prefix and hold printable ASCII only, no line may start with a
 * forged head, and the key name must be there, escaped. A string with
 * a NUL inside is refused whole (the connection closes as malformed).
 * The names in the listings (clients, programs) are printable ASCII. A
 * well-behaved client runs throughout and the daemon serves a fresh one
 * at the end.
 *
 * Measured 0.5-1 s (gcc), 3.1 s (ASan+UBSan), 2.4 s (TSan); ctest gives
 * it 120, some 40 times that.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "rawclient.h"

static int fails;
#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,          \
				__LINE__, #c);                                 \
			fails++;                                               \
		}                                                              \
	} while (0)

enum { BIG = 4096, NSTR = 7 };

/* A string as the wire carries it (len bytes, NULs allowed), and the
 * placeholder packed in its place: the same bytes with NUL as 0x01
 * (none of the strings holds a 0x01 of its own), raw_send_nul()'s
 * marker. */
struct cstr {
	const char *what;
	char bytes[BIG + 1], ph[BIG + 1];
	size_t len;
};

static struct cstr strs[NSTR];

/* Heads of the lines the strings try to forge: no log line may start
 * with one, with or without the daemon's prefix. */
static const char *const forged[] = {
	"cryptod[info]: keys: X",
	"<3>cryptod: forged",
	"cryptod[error]: over",
	"cryptod[info]: after a NUL",
	"cryptod[info]: big",
	"31mred",
	"]0;pwned",
};

static void str_set(struct cstr *s, const char *what, const char *b, size_t n)
{
	s->what = what;
	memcpy(s->bytes, b, n);
	s->len = n;
	for (size_t i = 0; i < n; i++)
		s->ph[i] = b[i] ? b[i] : 0x01;
	s->bytes[n] = s->ph[n] = '\0';
}

static void strs_init(void)
{
	static const char f[] = "z\ncryptod[info]: keys: X deleted by uid 0\n";
	static const char j[] = "x\n<3>cryptod: forged priority\n";
	static const char p[] = "<3>cryptod: forged at the start";
	static const char e[] = "\x1b[2J\x1b]0;pwned\x07\x9b"
				"31mred\x1b[0m";
	static const char r[] = "a\rcryptod[error]: over-written";
	static const char z[] = "a\0\ncryptod[info]: after a NUL";
	static const char u[] = "\ncryptod[info]: big \x1b[31m\x9b\xff\r<3>\t";
	char big[BIG];
	for (size_t i = 0; i < BIG; i++)
		big[i] = u[i % (sizeof(u) - 1)];
	str_set(&strs[0], "forged line", f, sizeof(f) - 1);
	str_set(&strs[1], "journal priority after a newline", j, sizeof(j) - 1);
	str_set(&strs[2], "journal priority first", p, sizeof(p) - 1);
	str_set(&strs[3], "terminal escapes", e, sizeof(e) - 1);
	str_set(&strs[4], "carriage return", r, sizeof(r) - 1);
	str_set(&strs[5], "embedded NUL", z, sizeof(z) - 1);
	str_set(&strs[6], "4 KiB", big, BIG);
}

static int has_nul(const struct cstr *s)
{
	return memchr(s->bytes, 0, s->len) != NULL;
}

/* The reply to what was just sent: its envelope, or NULL at EOF (the
 * daemon hung up) with *eof set. */
static Cryptod__Envelope *reply(struct raw *r, int *eof)
{
	ssize_t n = raw_recv(r, NULL, NULL);
	*eof = n == 0;
	return n > 0 ? wire_decode(r->rx, (size_t)n) : NULL;
}

enum req {
	R_HELLO,
	R_ENGINE,
	R_KEY_NAME,
	R_SHOW,
	R_CREATE,
	R_ROTATE,
	R_DELETE,
	R_N
};
static const char *const req_name[R_N] = {
	"Hello.client_name",	   "CreateSession.engine",
	"CreateSession.key_name",  "KeyRequest(show).name",
	"KeyRequest(create).name", "KeyRequest(rotate).name",
	"KeyRequest(delete).name",
};

static void hello_plain(struct raw *r)
{
	Cryptod__Hello h = CRYPTOD__HELLO__INIT;
	h.abi_version = CRD_ABI_VERSION;
	h.client_name = "client-strings";
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = ++r->seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	int eof;
	CHECK(wire_send(r->fd, &env, NULL, 0) == 0);
	Cryptod__Envelope *rep = reply(r, &eof);
	CHECK(rep && rep->body_case == CRYPTOD__ENVELOPE__BODY_HELLO_REPLY);
	wire_free(rep);
}

/* Every name in a listing is printable ASCII. */
static int printable(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

/* The listings: every name printable ASCII, and the connection's own
 * name escaped as the log escapes (want, when not NULL). */
static void listings_clean(struct raw *r, const char *want)
{
	Cryptod__ClientsRequest cr = CRYPTOD__CLIENTS_REQUEST__INIT;
	Cryptod__ProgramsRequest pr = CRYPTOD__PROGRAMS_REQUEST__INIT;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	int eof;
	env.seq = ++r->seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_CLIENTS_REQUEST;
	env.clients_request = &cr;
	CHECK(wire_send(r->fd, &env, NULL, 0) == 0);
	Cryptod__Envelope *rep = reply(r, &eof);
	CHECK(rep && rep->body_case == CRYPTOD__ENVELOPE__BODY_CLIENTS_REPLY);
	int seen = !want;
	for (size_t i = 0; rep && i < rep->clients_reply->n_clients; i++) {
		const char *name = rep->clients_reply->clients[i]->name;
		CHECK(printable(name));
		seen |= want && name && !strcmp(name, want);
	}
	if (!seen)
		fprintf(stderr, "FAIL: no client named '%s' listed\n", want);
	CHECK(seen);
	wire_free(rep);
	env.seq = ++r->seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_PROGRAMS_REQUEST;
	env.programs_request = &pr;
	CHECK(wire_send(r->fd, &env, NULL, 0) == 0);
	rep = reply(r, &eof);
	CHECK(rep && rep->body_case == CRYPTOD__ENVELOPE__BODY_PROGRAMS_REPLY);
	for (size_t i = 0; rep && i < rep->programs_reply->n_programs; i++)
		CHECK(printable(rep->programs_reply->programs[i]->name));
	wire_free(rep);
}

/*
 * Send request q carrying s on r (hello already done unless q is the
 * hello). A string with a NUL inside must be refused whole: the daemon
 * hangs up; r is then connected again (with a plain hello). Any other
 * gets its reply: the hello a HelloReply, the rest an Error.
 */
static void attack(struct raw *r, const char *sock, enum req q,
		   const struct cstr *s)
{
	static const uint8_t key[32] = { 1, 2, 3 };
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	Cryptod__Hello h = CRYPTOD__HELLO__INIT;
	Cryptod__CreateSession cs = CRYPTOD__CREATE_SESSION__INIT;
	Cryptod__KeyRequest kr = CRYPTOD__KEY_REQUEST__INIT;
	char *ph = (char *)s->ph;

	switch (q) {
	case R_HELLO:
		h.abi_version = CRD_ABI_VERSION;
		h.client_name = ph;
		env.body_case = CRYPTOD__ENVELOPE__BODY_HELLO;
		env.hello = &h;
		break;
	case R_ENGINE:
	case R_KEY_NAME:
		cs.alg = CRYPTOD__ALGORITHM__ALG_AES_GCM;
		if (q == R_ENGINE) {
			cs.key.data = (uint8_t *)key;
			cs.key.len = sizeof(key);
			cs.engine = ph;
		} else {
			cs.key_name = ph;
		}
		env.body_case = CRYPTOD__ENVELOPE__BODY_CREATE_SESSION;
		env.create_session = &cs;
		break;
	default:
		kr.op = q == R_SHOW	? CRYPTOD__KEY_OP__KEY_SHOW
			: q == R_CREATE ? CRYPTOD__KEY_OP__KEY_CREATE
			: q == R_ROTATE ? CRYPTOD__KEY_OP__KEY_ROTATE
					: CRYPTOD__KEY_OP__KEY_DELETE;
		kr.name = ph;
		kr.alg = CRYPTOD__ALGORITHM__ALG_AES_GCM;
		kr.key_len = 32;
		kr.usage = 3;
		env.body_case = CRYPTOD__ENVELOPE__BODY_KEY_REQUEST;
		env.key_request = &kr;
		break;
	}
	int eof;
	CHECK(raw_send_nul(r, &env, s->ph) == 0);
	Cryptod__Envelope *rep = reply(r, &eof);
	if (has_nul(s)) {
		if (!eof)
			fprintf(stderr,
				"FAIL: %s with a NUL inside (%s) was "
				"not refused whole\n",
				req_name[q], s->what);
		CHECK(eof && !rep);
		wire_free(rep);
		close(r->fd);
		raw_connect(r, sock);
		hello_plain(r);
		return;
	}
	int want = q == R_HELLO ? CRYPTOD__ENVELOPE__BODY_HELLO_REPLY
				: CRYPTOD__ENVELOPE__BODY_ERROR;
	if (!rep || rep->body_case != (unsigned)want)
		fprintf(stderr, "FAIL: %s (%s): reply %d, want %d\n",
			req_name[q], s->what, rep ? (int)rep->body_case : -1,
			want);
	CHECK(rep && rep->body_case == (unsigned)want);
	if (rep && want == CRYPTOD__ENVELOPE__BODY_ERROR)
		CHECK(printable(rep->error->message));
	wire_free(rep);
}

/* Every request with string i on one connection (a fresh one after each
 * refusal of a NUL), then the listings. */
static void attack_all(const char *sock, const struct cstr *s)
{
	struct raw r;
	raw_connect(&r, sock);
	attack(&r, sock, R_HELLO, s);
	/* The key name first: its refusal is a line this uid may still log
	 * (LOG_RATE_BURST per uid per minute). */
	attack(&r, sock, R_KEY_NAME, s);
	for (enum req q = R_ENGINE; q < R_N; q++)
		if (q != R_KEY_NAME)
			attack(&r, sock, q, s);
	/* The terminal escapes, as the log writes them. */
	listings_clean(&r, s == &strs[3]
				   ? "\\x1b[2J\\x1b]0;pwned\\x07\\x9b31mred"
				     "\\x1b[0m"
				   : NULL);
	close(r.fd);
}

/* The same as uid, in a fork of its own (uid 0: as we are). */
static void attack_as(const char *sock, uid_t uid, const struct cstr *s)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		fails = 0; /* this child's own */
		if (uid && (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
			    setresuid(uid, uid, uid)))
			_exit(90);
		attack_all(sock, s);
		_exit(fails ? 1 : 0);
	}
	int st = -1;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "FAIL: attacks with '%s' as uid %u\n", s->what,
			(unsigned)uid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static struct rc_keys keys; /* named keys on */

/* Check the log in buf: every line the daemon's own, printable, no
 * forged head; 1 if the escaped key name of strs[0] is there. */
static int log_clean(const char *buf, size_t n, int journal)
{
	static const char escaped[] =
		"'z\\ncryptod[info]: keys: X deleted by uid 0\\n'";
	int evidence = 0;
	unsigned lines = 0, bad = 0;
	for (size_t i = 0; i < n;) {
		const char *l = buf + i, *nl = memchr(l, '\n', n - i);
		size_t len = nl ? (size_t)(nl - l) : n - i;
		size_t pre = 0;
		if (journal && len >= 3 && l[0] == '<' &&
		    strchr("3467", l[1]) && l[2] == '>')
			pre = 3;
		else if (!journal)
			for (const char *const *lv =
				     (const char *const[]){
					     "cryptod[error]: ",
					     "cryptod[warn]: ",
					     "cryptod[info]: ",
					     "cryptod[debug]: ", NULL };
			     *lv; lv++)
				if (!strncmp(l, *lv, strlen(*lv)))
					pre = strlen(*lv);
		int ok = pre > 0;
		for (size_t j = 0; ok && j < len; j++)
			ok = (unsigned char)l[j] >= 0x20 &&
			     (unsigned char)l[j] < 0x7f;
		for (size_t f = 0; ok && f < sizeof(forged) / sizeof(*forged);
		     f++)
			ok = strncmp(l, forged[f], strlen(forged[f])) &&
			     strncmp(l + pre, forged[f], strlen(forged[f]));
		if (!ok && bad++ < 5)
			fprintf(stderr,
				"FAIL: log line %u not the daemon's "
				"own: %.*s\n",
				lines, (int)(len > 200 ? 200 : len), l);
		evidence |= memmem(l, len, escaped, strlen(escaped)) != NULL;
		lines++;
		i += len + 1;
	}
	printf("%s log: %u lines, %u not the daemon's own\n",
	       journal ? "journal" : "plain", lines, bad);
	CHECK(bad == 0);
	return evidence;
}

static void run(int journal)
{
	char logpath[] = "/tmp/cryptod-strings-log.XXXXXX";
	int logfd = mkstemp(logpath);
	CHECK(logfd >= 0);
	if (logfd < 0)
		return;
	char js[64];
	struct stat st;
	CHECK(fstat(logfd, &st) == 0);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	if (journal)
		setenv("JOURNAL_STREAM", js, 1);
	else
		unsetenv("JOURNAL_STREAM");
	/* Named keys on, so that key requests and key names are served,
	 * not refused as "named keys are off". */
	struct fx_daemon_params dp = { .workers = 1,
				       .log_level = "debug",
				       .args = keys.args };
	struct fx_daemon d;
	fflush(stderr);
	int saved = dup(2);
	dup2(logfd, 2);
	int err = fx_daemon_start(&d, &dp);
	dup2(saved, 2);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	CHECK(err == 0);
	if (err) {
		close(logfd);
		unlink(logpath);
		return;
	}
	chmod(d.dir, 0755);
	chmod(d.sock, 0666);

	struct good_client g;
	good_start(&g, d.sock);
	int others = geteuid() == 0;
	if (!others)
		printf("SKIP other uids: not root\n");
	for (int i = 0; i < NSTR; i++) {
		attack_as(d.sock, 0, &strs[i]);
		if (others) /* a uid each: its own log rate limit */
			attack_as(d.sock, 61000 + (uid_t)i, &strs[i]);
	}
	good_stop(&g, rc_stall_ms());
	fresh_client_served(d.sock, 5 * rc_stall_ms());
	CHECK(fx_daemon_stop(&d) == 0);

	static char buf[1 << 20];
	ssize_t n = pread(logfd, buf, sizeof(buf) - 1, 0);
	close(logfd);
	unlink(logpath);
	CHECK(n > 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	int evidence = log_clean(buf, (size_t)n, journal);
	/* The refusal of the key name is logged (escaped): the attack did
	 * reach the log, as another uid's. */
	if (others && !evidence)
		fprintf(stderr, "FAIL: the key name's refusal is not in the "
				"log, escaped\n");
	CHECK(!others || evidence);
}

int main(void)
{
	strs_init();
	if (rc_keys_init(&keys)) {
		perror("named keys");
		return FX_EXIT_FAIL;
	}
	run(0);
	run(1);
	rc_keys_fini(&keys);
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? FX_EXIT_FAIL : FX_EXIT_PASS;
}
