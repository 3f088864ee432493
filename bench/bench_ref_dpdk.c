/* SPDX-License-Identifier: MIT */
/*
 * Finding the DPDK path's plugin (bench/dpdk/bench_dpdk.c): cryptoctl
 * does not link DPDK, so a machine without it still runs every other
 * path, and the DPDK one says why it is missing.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#ifndef CRYPTOD_BENCH_PLUGIN_DIR
#define CRYPTOD_BENCH_PLUGIN_DIR "/usr/lib/cryptod"
#endif
#define PLUGIN_NAME "cryptod-bench-dpdk.so"

static const struct bench_dpdk_plugin *plugin;
static char plugin_why[256];
static bool tried;

static void plugin_fini(void)
{
	if (plugin && plugin->fini)
		plugin->fini();
}

/* Where the plugin may be: $CRYPTOD_BENCH_DPDK alone when set; else the
 * build tree (bench/dpdk/ beside cli/, where cryptoctl is built), then
 * the installed plugin directory. */
static unsigned candidates(char (*path)[PATH_MAX], unsigned max)
{
	const char *env = getenv("CRYPTOD_BENCH_DPDK");
	char exe[PATH_MAX];
	unsigned n = 0;
	ssize_t len;

	/* Given one, only that one: a run can be made without the path. */
	if (env && *env) {
		snprintf(path[n++], PATH_MAX, "%s", env);
		return n;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0 && n < max) {
		char *slash;

		exe[len] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			snprintf(path[n++], PATH_MAX, "%.*s/../bench/dpdk/%s",
				 PATH_MAX - 64, exe, PLUGIN_NAME);
		}
	}
	if (n < max)
		snprintf(path[n++], PATH_MAX, "%s/%s", CRYPTOD_BENCH_PLUGIN_DIR,
			 PLUGIN_NAME);
	return n;
}

static void load(void)
{
	const char *env = getenv("CRYPTOD_BENCH_DPDK");
	char path[3][PATH_MAX];
	unsigned n = candidates(path, 3);

	tried = true;
	snprintf(plugin_why, sizeof(plugin_why),
		 "no DPDK path: %.100s not found (built only where Debian's "
		 "libdpdk-dev is installed; scripts/deps.sh installs it)",
		 env && *env ? env : PLUGIN_NAME);
	for (unsigned i = 0; i < n; i++) {
		const struct bench_dpdk_plugin *p;
		void *h;

		if (access(path[i], R_OK))
			continue;
		h = dlopen(path[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(plugin_why, sizeof(plugin_why),
				 "no DPDK path: %.200s", dlerror());
			continue;
		}
		p = dlsym(h, "bench_dpdk_plugin");
		if (!p || p->abi != BENCH_DPDK_ABI) {
			snprintf(plugin_why, sizeof(plugin_why),
				 "no DPDK path: %.160s is not a plugin of this "
				 "build (ABI %u, want %u)",
				 path[i], p ? p->abi : 0, BENCH_DPDK_ABI);
			dlclose(h);
			continue;
		}
		plugin = p;
		atexit(plugin_fini);
		return;
	}
}

const struct bench_ref_ops *bench_dpdk_ops(char *why, size_t why_len)
{
	if (!tried)
		load();
	if (!plugin)
		snprintf(why, why_len, "%s", plugin_why);
	return plugin ? plugin->ops : NULL;
}
