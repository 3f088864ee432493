/* SPDX-License-Identifier: MIT */
/*
 * Private daemons: one per (workers, poll mode), each on its own socket in
 * one temp dir, started on first use, ready when the socket accepts, and
 * stopped with SIGTERM at the end, which must exit 0. Adaptive daemons
 * sleep when idle, so several can stay up and be measured in alternation;
 * a busy-poll daemon spins even when idle and is kept stopped (SIGSTOP)
 * except while its own configurations run.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "poolbench.h"

int pb_daemons_init(struct pb_daemons *ds, const char *bin, unsigned spin_us,
		    bool pin)
{
	memset(ds, 0, sizeof(*ds));
	ds->bin = bin;
	ds->spin_us = spin_us;
	ds->pin = pin;
	if (access(bin, X_OK)) {
		int err = -errno;
		fprintf(stderr, "poolbench: --daemon %s: %s\n", bin,
			strerror(errno));
		return err;
	}
	snprintf(ds->dir, sizeof(ds->dir), "/tmp/cryptod-poolbench.XXXXXX");
	if (!mkdtemp(ds->dir)) {
		int err = -errno;
		fprintf(stderr, "poolbench: mkdtemp: %s\n", strerror(errno));
		return err;
	}
	return 0;
}

static void show_log(const struct pb_daemon *d)
{
	char buf[4096];
	FILE *f = fopen(d->log, "r");
	size_t n;

	if (!f)
		return;
	fprintf(stderr, "---- %s ----\n", d->log);
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

static void child_exec(const struct pb_daemons *ds, const struct pb_daemon *d,
		       pid_t parent)
{
	char workers[16], spin[16];
	int fd;

	/* Never outlive the bench, even if it crashes. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);
	fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
	/* Not the CPU the bench may have pinned itself to: every CPU, and
	 * the daemon's --pin decides. */
	cpu_set_t all;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&all);
	for (long i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	sched_setaffinity(0, sizeof(all), &all);
	snprintf(workers, sizeof(workers), "%u", d->workers);
	snprintf(spin, sizeof(spin), "%u", ds->spin_us);
	execl(ds->bin, ds->bin, "--socket", d->sock, "--workers", workers,
	      "--poll-mode", d->busy ? "busy" : "adaptive", "--spin-us", spin,
	      "--log-level", "warn", ds->pin ? "--pin" : (char *)NULL,
	      (char *)NULL);
	fprintf(stderr, "exec %s: %s\n", ds->bin, strerror(errno));
	_exit(127);
}

/* Reap d if it died; reports how. Returns true when it is gone. */
static bool reaped(struct pb_daemon *d, int options, int *status)
{
	if (waitpid(d->pid, status, options) != d->pid)
		return false;
	d->pid = 0;
	return true;
}

static void report_exit(struct pb_daemons *ds, const struct pb_daemon *d,
			int status, const char *when)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	ds->failures++;
	if (WIFEXITED(status))
		fprintf(stderr,
			"poolbench: cryptod --workers %u --poll-mode %s exited "
			"with status %d %s (0 expected)\n",
			d->workers, d->busy ? "busy" : "adaptive",
			WEXITSTATUS(status), when);
	else
		fprintf(stderr,
			"poolbench: cryptod --workers %u --poll-mode %s died "
			"of signal %d %s\n",
			d->workers, d->busy ? "busy" : "adaptive",
			WIFSIGNALED(status) ? WTERMSIG(status) : 0, when);
	show_log(d);
}

static int daemon_start(struct pb_daemons *ds, struct pb_daemon *d)
{
	pid_t parent = getpid();
	int status;

	fflush(NULL);
	d->pid = fork();
	if (d->pid < 0) {
		int err = -errno;
		fprintf(stderr, "poolbench: fork: %s\n", strerror(errno));
		d->pid = 0;
		return err;
	}
	if (d->pid == 0)
		child_exec(ds, d, parent);

	for (unsigned waited = 0; waited < PB_READY_MS; waited += 5) {
		if (reaped(d, WNOHANG, &status)) {
			report_exit(ds, d, status, "before it was ready");
			return -ECHILD;
		}
		if (sock_accepts(d->sock))
			return 0;
		pb_sleep_us(5000);
	}
	fprintf(stderr,
		"poolbench: %s did not accept connections on %s within %d "
		"ms\n",
		ds->bin, d->sock, PB_READY_MS);
	show_log(d);
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &status, 0);
	d->pid = 0;
	ds->failures++;
	return -ETIMEDOUT;
}

int pb_daemon_get(struct pb_daemons *ds, unsigned workers, bool busy,
		  struct pb_daemon **out)
{
	struct pb_daemon *d;
	int err;

	for (unsigned i = 0; i < ds->n; i++) {
		d = &ds->d[i];
		if (d->workers == workers && d->busy == busy && d->pid) {
			*out = d;
			return 0;
		}
	}
	if (ds->n == PB_MAX_DAEMONS)
		return -ENOSPC;
	d = &ds->d[ds->n];
	memset(d, 0, sizeof(*d));
	d->workers = workers;
	d->busy = busy;
	if ((size_t)snprintf(d->sock, sizeof(d->sock), "%s/w%u-%s.sock",
			     ds->dir, workers,
			     busy ? "busy" : "adaptive") >= sizeof(d->sock) ||
	    (size_t)snprintf(d->log, sizeof(d->log), "%s/w%u-%s.log", ds->dir,
			     workers,
			     busy ? "busy" : "adaptive") >= sizeof(d->log))
		return -ENAMETOOLONG;
	ds->n++; /* its log and socket are removed at fini, started or not */
	err = daemon_start(ds, d);
	if (err)
		return err;
	*out = d;
	return 0;
}

int pb_daemon_pause(struct pb_daemon *d)
{
	int status;

	if (!d->pid || d->paused)
		return 0;
	if (kill(d->pid, SIGSTOP))
		return -errno;
	/* Our child: waitpid reports when the stop has taken effect. */
	if (waitpid(d->pid, &status, WUNTRACED) != d->pid ||
	    !WIFSTOPPED(status))
		return -ECHILD;
	d->paused = true;
	return 0;
}

int pb_daemon_resume(struct pb_daemon *d)
{
	int status;

	if (!d->pid || !d->paused)
		return 0;
	if (kill(d->pid, SIGCONT))
		return -errno;
	if (waitpid(d->pid, &status, WCONTINUED) != d->pid ||
	    !WIFCONTINUED(status))
		return -ECHILD;
	d->paused = false;
	return 0;
}

int pb_daemon_stop(struct pb_daemons *ds, struct pb_daemon *d)
{
	int status;

	if (!d->pid)
		return 0;
	pb_daemon_resume(d);
	kill(d->pid, SIGTERM);
	for (unsigned waited = 0; waited < PB_STOP_MS; waited += 5) {
		if (reaped(d, WNOHANG, &status)) {
			unsigned before = ds->failures;
			report_exit(ds, d, status,
				    "by the time it was stopped");
			return ds->failures == before ? 0 : -1;
		}
		pb_sleep_us(5000);
	}
	fprintf(stderr,
		"poolbench: cryptod --workers %u ignored SIGTERM for %d ms; "
		"killing it\n",
		d->workers, PB_STOP_MS);
	show_log(d);
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &status, 0);
	d->pid = 0;
	ds->failures++;
	return -1;
}

unsigned pb_daemons_fini(struct pb_daemons *ds)
{
	for (unsigned i = 0; i < ds->n; i++) {
		pb_daemon_stop(ds, &ds->d[i]);
		unlink(ds->d[i].sock);
		unlink(ds->d[i].log);
	}
	if (ds->dir[0])
		rmdir(ds->dir);
	ds->n = 0;
	return ds->failures;
}

unsigned pb_daemons_pids(const struct pb_daemons *ds, pid_t *out, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ds->n && n < max; i++)
		if (ds->d[i].pid)
			out[n++] = ds->d[i].pid;
	return n;
}

void pb_daemon_worker_cpus(const struct pb_daemon *d, char *buf, size_t len)
{
	char path[64];
	size_t used = 0;
	DIR *dir;
	struct dirent *e;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task", (int)d->pid);
	dir = d->pid ? opendir(path) : NULL;
	if (!dir)
		return;
	while ((e = readdir(dir)) && used + 16 < len) {
		char line[512], comm[32];
		unsigned w;
		int cpu = -1;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stat",
			 (int)d->pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		char *p = fgets(line, sizeof(line), f) ? strrchr(line, ')')
						       : NULL;
		fclose(f);
		/* Field 39, "processor": 36 spaces after field 3's. */
		if (!p || sscanf(line, "%*d (%31[^)]", comm) != 1 ||
		    sscanf(comm, "cryptod-w%u", &w) != 1)
			continue;
		p++;
		for (unsigned k = 0; k < 36 && p; k++)
			p = strchr(p + 1, ' ');
		if (!p || sscanf(p, "%d", &cpu) != 1)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%sw%u@%d",
					 used ? " " : "", w, cpu);
	}
	closedir(dir);
}
