/* SPDX-License-Identifier: MIT */
/*
 * --spawn-daemon: run a private cryptod on a socket in a fresh temp dir,
 * ready when the socket accepts a connection, stopped with SIGTERM. Its
 * output goes to a log in that dir, shown only when something went wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* Generous: sanitizer builds start slowly on a loaded 2-core machine. */
#define SPAWN_READY_MS 20000
#define SPAWN_STOP_MS 10000

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void show_log(const struct bench_spawn *s)
{
	char buf[4096];
	FILE *f = fopen(s->log, "r");
	size_t n;

	if (!f)
		return;
	fprintf(stderr, "---- %s ----\n", s->log);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fprintf(stderr, "----\n");
	fclose(f);
}

static bool sock_accepts(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return rc == 0;
}

/* Keep the daemon off the client's CPU: every other online CPU. */
static void child_avoid_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || sched_getaffinity(0, sizeof(set), &set))
		return;
	CPU_CLR(cpu, &set);
	if (CPU_COUNT(&set) > 0)
		sched_setaffinity(0, sizeof(set), &set);
}

static void child_exec(const struct bench_spawn *s, const char *bin,
		       unsigned workers, const char *sock, int avoid_cpu,
		       pid_t parent)
{
	char wbuf[16];
	int fd;

	/* Never outlive the bench, even if it crashes. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);
	fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
	child_avoid_cpu(avoid_cpu);
	snprintf(wbuf, sizeof(wbuf), "%u", workers);
	execl(bin, bin, "--socket", sock, "--workers", wbuf, (char *)NULL);
	fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
	_exit(127);
}

static void cleanup_dir(struct bench_spawn *s, const char *sock)
{
	if (sock)
		unlink(sock);
	unlink(s->log);
	rmdir(s->dir);
}

int bench_spawn_start(struct bench_spawn *s, const char *bin, unsigned workers,
		      int avoid_cpu, char *sock, size_t sock_len)
{
	pid_t parent = getpid(), pid;
	unsigned waited = 0;
	int status;

	memset(s, 0, sizeof(*s));
	if (access(bin, X_OK)) {
		bench_err("--spawn-daemon %s: %s\n", bin, strerror(errno));
		return -errno;
	}
	snprintf(s->dir, sizeof(s->dir), "/tmp/cryptod-bench.XXXXXX");
	if (!mkdtemp(s->dir)) {
		bench_err("mkdtemp: %s\n", strerror(errno));
		return -errno;
	}
	snprintf(s->log, sizeof(s->log), "%s/cryptod.log", s->dir);
	if ((size_t)snprintf(sock, sock_len, "%s/cryptod.sock", s->dir) >=
	    sock_len) {
		rmdir(s->dir);
		return -ENAMETOOLONG;
	}

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		bench_err("fork: %s\n", strerror(errno));
		rmdir(s->dir);
		return -errno;
	}
	if (pid == 0)
		child_exec(s, bin, workers, sock, avoid_cpu, parent);
	s->pid = pid;

	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			bench_err("%s %s %d before it was ready\n", bin,
				  WIFEXITED(status) ? "exited with status"
						    : "died of signal",
				  WIFEXITED(status) ? WEXITSTATUS(status)
						    : WTERMSIG(status));
			show_log(s);
			s->pid = 0;
			cleanup_dir(s, sock);
			return -ECHILD;
		}
		if (sock_accepts(sock))
			return 0;
		if (waited >= SPAWN_READY_MS)
			break;
		sleep_ms(10);
		waited += 10;
	}
	bench_err("%s did not accept connections on %s within %d "
		  "ms\n",
		  bin, sock, SPAWN_READY_MS);
	show_log(s);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	s->pid = 0;
	cleanup_dir(s, sock);
	return -ETIMEDOUT;
}

int bench_spawn_stop(struct bench_spawn *s)
{
	char sock[BENCH_PATH_MAX];
	unsigned waited = 0;
	int status, rc;

	if (!s->pid)
		return 0;
	kill(s->pid, SIGTERM);
	for (;;) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid)
			break;
		if (waited >= SPAWN_STOP_MS) {
			bench_err("the daemon ignored SIGTERM for "
				  "%d ms; killing it\n",
				  SPAWN_STOP_MS);
			show_log(s);
			kill(s->pid, SIGKILL);
			waitpid(s->pid, &status, 0);
			s->pid = 0;
			rc = -ETIMEDOUT;
			goto out;
		}
		sleep_ms(10);
		waited += 10;
	}
	s->pid = 0;
	if (WIFEXITED(status)) {
		rc = WEXITSTATUS(status);
	} else {
		rc = -EINTR;
		bench_err("the daemon died of signal %d on "
			  "SIGTERM\n",
			  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	}
	if (rc > 0)
		bench_err("the daemon exited with status %d on "
			  "SIGTERM (0 expected)\n",
			  rc);
	if (rc)
		show_log(s);
out:
	snprintf(sock, sizeof(sock), "%s/cryptod.sock", s->dir);
	cleanup_dir(s, sock);
	return rc;
}
