/* SPDX-License-Identifier: MIT */
/*
 * The one daemon-spawning helper of every bench mode: run a private
 * cryptod on a socket in a temp dir, ready when the socket accepts a
 * connection, stopped with SIGTERM (exit status 0 expected). Its output
 * goes to a log beside the socket, shown only when something went wrong.
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

void bench_spawn_show_log(const struct bench_spawn *s)
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
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return rc == 0;
}

/* Keep the daemon off the client's CPU (avoid_cpu >= 0), or give it
 * every online CPU whatever the bench pinned itself to (all_cpus: the
 * daemon's --pin decides); else it inherits ours. */
static void child_cpus(const struct bench_spawn_opts *o)
{
	cpu_set_t set;

	if (o->all_cpus) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		CPU_ZERO(&set);
		for (long i = 0; i < n && i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	} else if (o->avoid_cpu >= 0) {
		if (sched_getaffinity(0, sizeof(set), &set))
			return;
		CPU_CLR(o->avoid_cpu, &set);
		if (CPU_COUNT(&set) == 0)
			return;
	} else {
		return;
	}
	sched_setaffinity(0, sizeof(set), &set);
}

static void child_exec(const struct bench_spawn *s,
		       const struct bench_spawn_opts *o, pid_t parent)
{
	char workers[16], spin[16];
	const char *argv[16];
	unsigned n = 0;
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
	child_cpus(o);
	snprintf(workers, sizeof(workers), "%u", o->workers ? o->workers : 1);
	snprintf(spin, sizeof(spin), "%u", o->spin_us);
	argv[n++] = o->bin;
	argv[n++] = "--socket";
	argv[n++] = s->sock;
	argv[n++] = "--workers";
	argv[n++] = workers;
	if (o->poll_mode) {
		argv[n++] = "--poll-mode";
		argv[n++] = o->poll_mode;
	}
	if (o->spin_us) {
		argv[n++] = "--spin-us";
		argv[n++] = spin;
	}
	if (o->log_level) {
		argv[n++] = "--log-level";
		argv[n++] = o->log_level;
	}
	if (o->pin)
		argv[n++] = "--pin";
	argv[n] = NULL;
	execv(o->bin, (char *const *)argv);
	fprintf(stderr, "exec %s: %s\n", o->bin, strerror(errno));
	_exit(127);
}

static void spawn_cleanup(struct bench_spawn *s)
{
	unlink(s->sock);
	unlink(s->log);
	if (s->own_dir)
		rmdir(s->dir);
}

/* Exited before it was ready, or stopped: say how, unless with 0. */
static int spawn_status(const struct bench_spawn *s, int status,
			const char *when)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		bench_err("%s exited with status %d %s (0 expected)\n", s->what,
			  WEXITSTATUS(status), when);
	else
		bench_err("%s died of signal %d %s\n", s->what,
			  WIFSIGNALED(status) ? WTERMSIG(status) : 0, when);
	bench_spawn_show_log(s);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -EINTR;
}

int bench_spawn_start(struct bench_spawn *s, const struct bench_spawn_opts *o)
{
	const char *name = o->name ? o->name : "cryptod";
	pid_t parent = getpid(), pid;
	int status;

	memset(s, 0, sizeof(*s));
	snprintf(s->what, sizeof(s->what), "%s --workers %u%s%s", o->bin,
		 o->workers ? o->workers : 1,
		 o->poll_mode ? " --poll-mode " : "",
		 o->poll_mode ? o->poll_mode : "");
	if (access(o->bin, X_OK)) {
		int err = -errno;

		bench_err("--spawn-daemon %s: %s\n", o->bin, strerror(errno));
		return err;
	}
	if (o->dir) {
		snprintf(s->dir, sizeof(s->dir), "%s", o->dir);
	} else {
		snprintf(s->dir, sizeof(s->dir), "/tmp/cryptod-bench.XXXXXX");
		if (!mkdtemp(s->dir)) {
			int err = -errno;

			bench_err("mkdtemp: %s\n", strerror(errno));
			return err;
		}
		s->own_dir = true;
	}
	if ((size_t)snprintf(s->sock, sizeof(s->sock), "%s/%s.sock", s->dir,
			     name) >= sizeof(s->sock) ||
	    (size_t)snprintf(s->log, sizeof(s->log), "%s/%s.log", s->dir,
			     name) >= sizeof(s->log)) {
		spawn_cleanup(s);
		return -ENAMETOOLONG;
	}

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		bench_err("fork: %s\n", strerror(errno));
		spawn_cleanup(s);
		return err;
	}
	if (pid == 0)
		child_exec(s, o, parent);
	s->pid = pid;

	for (unsigned waited = 0;; waited += 5) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			s->pid = 0;
			if (!spawn_status(s, status, "before it was ready"))
				bench_err("%s exited before it was ready\n",
					  s->what);
			spawn_cleanup(s);
			return -ECHILD;
		}
		if (sock_accepts(s->sock))
			return 0;
		if (waited >= SPAWN_READY_MS)
			break;
		sleep_ms(5);
	}
	bench_err("%s did not accept connections on %s within %d ms\n", s->what,
		  s->sock, SPAWN_READY_MS);
	bench_spawn_show_log(s);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	s->pid = 0;
	spawn_cleanup(s);
	return -ETIMEDOUT;
}

int bench_spawn_stop(struct bench_spawn *s)
{
	int status, rc;

	if (!s->pid) {
		spawn_cleanup(s);
		return 0;
	}
	kill(s->pid, SIGTERM);
	for (unsigned waited = 0;; waited += 5) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid)
			break;
		if (waited >= SPAWN_STOP_MS) {
			bench_err("%s ignored SIGTERM for %d ms; killing it\n",
				  s->what, SPAWN_STOP_MS);
			bench_spawn_show_log(s);
			kill(s->pid, SIGKILL);
			waitpid(s->pid, &status, 0);
			s->pid = 0;
			spawn_cleanup(s);
			return -ETIMEDOUT;
		}
		sleep_ms(5);
	}
	s->pid = 0;
	rc = spawn_status(s, status, "on SIGTERM");
	spawn_cleanup(s);
	return rc;
}
