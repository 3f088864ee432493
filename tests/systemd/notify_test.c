/* SPDX-License-Identifier: MIT */
/*
 * sd_notify end to end: this program plays the service manager. It binds
 * a $NOTIFY_SOCKET (a path, then an abstract name), starts the real
 * daemon with a watchdog interval, and checks what arrives, from whom:
 *   READY=1 (with STATUS=) only once the control socket accepts clients,
 *   WATCHDOG=1 at about half the interval, again and again,
 *   STOPPING=1 after SIGTERM, then exit status 0;
 * and that no WATCHDOG=1 comes when $WATCHDOG_PID names another process.
 *
 *   notify_test CRYPTOD
 *
 * Exit 0 when every check passed, 1 otherwise.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WD_USEC 300000 /* pings expected every 150 ms */

static int failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL: " __VA_ARGS__);                 \
			fputc('\n', stderr);                                   \
			failures++;                                            \
		}                                                              \
	} while (0)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bind_unix(int type, const char *name, socklen_t *out_len,
		     struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	size_t len = strlen(name);
	memcpy(sa->sun_path, name, len);
	socklen_t salen = offsetof(struct sockaddr_un, sun_path) + len;
	if (name[0] == '@')
		sa->sun_path[0] = '\0';
	else
		salen++;
	if (bind(fd, (struct sockaddr *)sa, salen) < 0) {
		close(fd);
		return -1;
	}
	*out_len = salen;
	return fd;
}

/* Next datagram within 'timeout' s, with the sender's pid. Length or -1. */
static ssize_t recv_msg(int fd, char *buf, size_t size, double timeout,
			pid_t *sender)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (poll(&p, 1, (int)(timeout * 1000)) <= 0)
		return -1;
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(struct ucred))];
	} cm;
	struct iovec iov = { .iov_base = buf, .iov_len = size - 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = &cm,
			     .msg_controllen = sizeof(cm) };
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	*sender = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;
			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			*sender = uc.pid;
		}
	return n;
}

/* Does "A=1\nB=2" contain the line 'line'? */
static int has_line(const char *msg, const char *line)
{
	size_t l = strlen(line);
	for (const char *p = msg; p && *p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, line, l) && (p[l] == '\n' || p[l] == '\0'))
			return 1;
	}
	return 0;
}

/* A connected control socket, or -1. */
static int connect_to(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (fd >= 0 && strlen(path) < sizeof(sa.sun_path))
		memcpy(sa.sun_path, path, strlen(path) + 1);
	if (fd < 0 || !sa.sun_path[0] ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int can_connect(const char *path)
{
	int fd = connect_to(path);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* wd_for_us: 1 WATCHDOG_PID = the daemon, 0 another pid. */
static void run(const char *daemon, const char *dir, const char *notify_name,
		int wd_for_us)
{
	char sock[128];
	snprintf(sock, sizeof(sock), "%s/cryptod.sock", dir);
	struct sockaddr_un sa;
	socklen_t salen;
	int nfd = bind_unix(SOCK_DGRAM, notify_name, &salen, &sa);
	if (nfd < 0) {
		perror("notify socket");
		failures++;
		return;
	}
	int one = 1;
	setsockopt(nfd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	printf("-- NOTIFY_SOCKET=%s, watchdog for %s\n", notify_name,
	       wd_for_us ? "the daemon" : "another pid");

	pid_t pid = fork();
	if (pid == 0) {
		char buf[32];
		setenv("NOTIFY_SOCKET", notify_name, 1);
		snprintf(buf, sizeof(buf), "%d", WD_USEC);
		setenv("WATCHDOG_USEC", buf, 1);
		snprintf(buf, sizeof(buf), "%d",
			 wd_for_us ? (int)getpid() : (int)getppid());
		setenv("WATCHDOG_PID", buf, 1);
		execl(daemon, daemon, "--socket", sock, "--workers", "1",
		      (char *)NULL);
		_exit(127);
	}

	char msg[1024];
	pid_t sender;
	double t0 = now_s();
	ssize_t n;
	int ready = 0, early_wd = 0;
	/* Sanitizer builds start slowly: allow 30 s for READY=1. */
	while (!ready &&
	       (n = recv_msg(nfd, msg, sizeof(msg), 30, &sender)) > 0) {
		CHECK(sender == pid, "message from pid %d, not the daemon %d",
		      (int)sender, (int)pid);
		if (has_line(msg, "READY=1")) {
			ready = 1;
			CHECK(strstr(msg, "STATUS=serving ") != NULL,
			      "READY=1 without a STATUS= line: '%s'", msg);
			/* Ready means clients can connect now. */
			CHECK(can_connect(sock),
			      "READY=1 sent before %s accepts", sock);
		} else if (has_line(msg, "WATCHDOG=1")) {
			early_wd++;
		}
	}
	CHECK(ready, "no READY=1 within 30 s");
	printf("READY=1 after %.2f s\n", now_s() - t0);

	/* Watch 1.5 s: ten intervals of 150 ms. A loaded machine delays
	 * timers, so ask for 3, not 10. A client stays connected meanwhile:
	 * the status 'systemctl status' shows must come to count it. */
	int client = connect_to(sock);
	CHECK(client >= 0, "cannot connect to %s", sock);
	int wd = 0, stopping_early = 0, status_client = 0;
	double until = now_s() + 1.5;
	while (now_s() < until) {
		n = recv_msg(nfd, msg, sizeof(msg), until - now_s(), &sender);
		if (n <= 0)
			continue;
		CHECK(sender == pid, "message from pid %d", (int)sender);
		wd += has_line(msg, "WATCHDOG=1");
		if (strstr(msg, "STATUS=serving ") &&
		    strstr(msg, ": 1 client,"))
			status_client = 1;
		stopping_early += has_line(msg, "STOPPING=1");
	}
	printf("WATCHDOG=1 x %d in 1.5 s\n", wd);
	if (wd_for_us)
		CHECK(wd >= 3, "only %d WATCHDOG=1 in 1.5 s (interval %d us)",
		      wd, WD_USEC);
	else
		CHECK(wd + early_wd == 0,
		      "%d WATCHDOG=1 though WATCHDOG_PID is another process",
		      wd + early_wd);
	CHECK(!stopping_early, "STOPPING=1 before SIGTERM");
	if (wd_for_us)
		CHECK(status_client,
		      "no STATUS= counting the connected client in 1.5 s");
	if (client >= 0)
		close(client);

	kill(pid, SIGTERM);
	int stopping = 0;
	while (!stopping &&
	       (n = recv_msg(nfd, msg, sizeof(msg), 20, &sender)) > 0)
		stopping = has_line(msg, "STOPPING=1");
	CHECK(stopping, "no STOPPING=1 within 20 s of SIGTERM");
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "daemon exit status %d (signal %d)",
	      WIFEXITED(st) ? WEXITSTATUS(st) : -1,
	      WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	printf("STOPPING=1, exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	close(nfd);
	if (notify_name[0] == '/')
		unlink(notify_name);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: notify_test CRYPTOD\n");
		return 2;
	}
	char dir[] = "/tmp/cryptod-notify.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char path[128], abstract[128];
	snprintf(path, sizeof(path), "%s/notify", dir);
	snprintf(abstract, sizeof(abstract), "@cryptod-notify-test-%d",
		 (int)getpid());

	run(argv[1], dir, path, 1);
	run(argv[1], dir, abstract, 1);
	run(argv[1], dir, path, 0);

	char sock[160];
	snprintf(sock, sizeof(sock), "%s/cryptod.sock", dir);
	unlink(sock);
	rmdir(dir);
	printf("%s (%d failure(s))\n", failures ? "FAILED" : "passed",
	       failures);
	return failures ? 1 : 0;
}
