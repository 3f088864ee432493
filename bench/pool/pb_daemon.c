/* SPDX-License-Identifier: MIT */
/*
 * Private daemons: one per (workers, poll mode), each on its own socket in
 * one temp dir, started on first use by bench_spawn (the one spawning
 * helper) and stopped with SIGTERM at the end, which must exit 0.
 * Adaptive daemons sleep when idle, so several can stay up and be
 * measured in alternation; a busy-poll daemon spins even when idle and is
 * kept stopped (SIGSTOP) except while its own configurations run.
 */
#include <errno.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

		bench_err("--spawn-daemon %s: %s\n", bin, strerror(errno));
		return err;
	}
	snprintf(ds->dir, sizeof(ds->dir), "/tmp/cryptod-poolbench.XXXXXX");
	if (!mkdtemp(ds->dir)) {
		int err = -errno;

		bench_err("mkdtemp: %s\n", strerror(errno));
		return err;
	}
	return 0;
}

int pb_daemon_get(struct pb_daemons *ds, unsigned workers, bool busy,
		  struct pb_daemon **out)
{
	char name[32];
	struct pb_daemon *d;

	for (unsigned i = 0; i < ds->n; i++) {
		d = &ds->d[i];
		if (d->workers == workers && d->busy == busy && d->sp.pid) {
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
	snprintf(name, sizeof(name), "w%u-%s", workers,
		 busy ? "busy" : "adaptive");
	const struct bench_spawn_opts o = {
		.bin = ds->bin,
		.workers = workers,
		.avoid_cpu = -1,
		.all_cpus = true, /* not the CPU the bench pinned itself to */
		.poll_mode = busy ? "busy" : "adaptive",
		.spin_us = ds->spin_us,
		.log_level = "warn",
		.pin = ds->pin,
		.dir = ds->dir,
		.name = name,
	};
	int err = bench_spawn_start(&d->sp, &o);

	if (err) {
		ds->failures++;
		return err;
	}
	ds->n++;
	*out = d;
	return 0;
}

int pb_daemon_pause(struct pb_daemon *d)
{
	int status;

	if (!d->sp.pid || d->paused)
		return 0;
	if (kill(d->sp.pid, SIGSTOP))
		return -errno;
	/* Our child: waitpid reports when the stop has taken effect. */
	if (waitpid(d->sp.pid, &status, WUNTRACED) != d->sp.pid ||
	    !WIFSTOPPED(status))
		return -ECHILD;
	d->paused = true;
	return 0;
}

int pb_daemon_resume(struct pb_daemon *d)
{
	int status;

	if (!d->sp.pid || !d->paused)
		return 0;
	if (kill(d->sp.pid, SIGCONT))
		return -errno;
	if (waitpid(d->sp.pid, &status, WCONTINUED) != d->sp.pid ||
	    !WIFCONTINUED(status))
		return -ECHILD;
	d->paused = false;
	return 0;
}

int pb_daemon_stop(struct pb_daemons *ds, struct pb_daemon *d)
{
	if (!d->sp.pid)
		return 0;
	pb_daemon_resume(d);
	if (bench_spawn_stop(&d->sp) == 0)
		return 0;
	ds->failures++;
	return -1;
}

unsigned pb_daemons_fini(struct pb_daemons *ds)
{
	for (unsigned i = 0; i < ds->n; i++)
		pb_daemon_stop(ds, &ds->d[i]);
	if (ds->dir[0])
		rmdir(ds->dir);
	ds->n = 0;
	return ds->failures;
}

unsigned pb_daemons_pids(const struct pb_daemons *ds, int *out, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ds->n && n < max; i++)
		if (ds->d[i].sp.pid)
			out[n++] = ds->d[i].sp.pid;
	return n;
}

void pb_daemon_worker_cpus(const struct pb_daemon *d, char *buf, size_t len)
{
	char path[64];
	size_t used = 0;
	DIR *dir;
	struct dirent *e;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task", (int)d->sp.pid);
	dir = d->sp.pid ? opendir(path) : NULL;
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
			 (int)d->sp.pid, e->d_name);
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
