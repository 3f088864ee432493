/* SPDX-License-Identifier: MIT */
/*
 * cryptod-bench: the benchmark ('cryptoctl bench', cmd_bench.c), a program
 * of its own so that cryptoctl does not link what it compares with
 * (ipsec-mb and OpenSSL in-process; DPDK is a plugin it loads). cryptoctl
 * runs it for 'cryptoctl bench ARGS' with the global --socket in
 * CLI_BENCH_SOCKET_ENV; run as cryptod-poolbench (a link) it runs the
 * pool mode, the name that benchmark had before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int main(int argc, char **argv)
{
	struct cli cli = { .socket = getenv(CLI_BENCH_SOCKET_ENV) };
	const char *base = strrchr(argv[0], '/');
	char prog[] = "cryptoctl: bench", mode[] = "pool";
	char **sub;
	int n = 0, ret;

	cli_guard_std_fds();
	base = base ? base + 1 : argv[0];
	sub = calloc((size_t)argc + 2, sizeof(*sub));
	if (!sub) {
		cli_err("out of memory");
		return CLI_EXIT_FAIL;
	}
	sub[n++] = prog;
	if (!strcmp(base, "cryptod-poolbench"))
		sub[n++] = mode;
	memcpy(sub + n, argv + 1, (size_t)(argc - 1) * sizeof(*sub));
	ret = cmd_bench(&cli, n + argc - 1, sub);
	free(sub);
	if (fflush(stdout) || ferror(stdout)) {
		cli_err("write error on stdout: %s", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	return ret;
}
