/* SPDX-License-Identifier: MIT */
/*
 * What every cryptoctl command shares: diagnostics, operands, the
 * daemon's socket and the connection, the simple options. Below the
 * dispatcher (cryptoctl.c) and every command: it calls none of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "table.h"

unsigned cli_closed_fds;

/*
 * A closed 0, 1 or 2 would be the first descriptor the next open() or
 * socket() returns: the daemon's socket would be read as input, or get
 * the output and the diagnostics written into it. Before anything else,
 * fill each hole with /dev/null (in order, so that each open() lands on
 * the one being filled) and note which were closed: a command that needs
 * the stream says so (cli_closed_fds).
 */
void cli_guard_std_fds(void)
{
	int fd, n;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		cli_closed_fds |= 1u << fd;
		n = open("/dev/null", O_RDWR);
		if (n < 0)
			_exit(CLI_EXIT_FAIL); /* nowhere to even say so */
		if (n != fd)
			close(n); /* cannot happen: fd is the lowest free */
	}
}

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("cryptoctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* One line, "cryptoctl: CMD: what is wrong"; returns -EINVAL. */
int cli_usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "cryptoctl: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

int cli_no_args(const char *cmd, int argc, char **argv)
{
	if (optind < argc)
		return cli_usage_err(cmd, "unexpected argument '%s'",
				     argv[optind]);
	return 0;
}

/* The socket path: --socket, else the default. 0 or -ENAMETOOLONG. */
static int cli_socket_path(struct cli *cli)
{
	if (!cli->socket)
		return cc_default_socket_path(cli->path, sizeof(cli->path));
	if (strlen(cli->socket) >= sizeof(cli->path))
		return -ENAMETOOLONG;
	strcpy(cli->path, cli->socket);
	return 0;
}

int cli_connect_quiet(struct cli *cli, struct cc_conn **conn)
{
	int ret = cli_socket_path(cli);

	if (ret < 0)
		return ret;
	return cc_connect(cli->path, "cryptoctl", conn);
}

/*
 * Connect and say hello. On failure print why, naming the socket, and
 * return -errno; the caller exits with CLI_EXIT_FAIL.
 */
int cli_connect(struct cli *cli, struct cc_conn **conn)
{
	int ret;

	ret = cli_socket_path(cli);
	if (ret < 0) {
		cli_err("socket path too long (at most %zu bytes)",
			sizeof(cli->path) - 1);
		return ret;
	}

	ret = cc_connect(cli->path, "cryptoctl", conn);
	if (ret == -ENOENT || ret == -ECONNREFUSED) {
		cli_err("cannot connect to %s: %s - is cryptod running?",
			cli->path, cc_strerror(ret));
		return ret;
	}
	if (ret == -EACCES || ret == -EPERM) {
		/* The system service's socket is for the cryptod group. */
		cli_err("cannot connect to %s: %s - the socket is for root and "
			"the cryptod group: 'sudo usermod -aG cryptod $USER', "
			"then log in again",
			cli->path, cc_strerror(ret));
		return ret;
	}
	if (ret < 0) {
		cli_err("cannot connect to %s: %s", cli->path,
			cc_strerror(ret));
		return ret;
	}
	return 0;
}

/*
 * getopt for commands whose only options are --help, --socket and, when
 * json is not NULL, --json. Returns 0 to go on, 1 when help was printed,
 * or -EINVAL (reported).
 */
int cli_parse_simple(struct cli *cli, int argc, char **argv, const char *cmd,
		     const char *usage, int *json)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "wide", no_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, json ? "hs:j" : "hs:", opts,
				NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage, stdout);
			return 1;
		case 's':
			cli->socket = optarg;
			break;
		case 'j':
			if (!json) /* not an option of this command */
				return cli_usage_err(cmd, "unrecognized option "
							  "'--json'");
			*json = 1;
			break;
		case 'W': /* every column (clients, sessions) */
			if (!json)
				return cli_usage_err(cmd, "unrecognized option "
							  "'--wide'");
			tbl_wide = 1;
			break;
		default:
			return -EINVAL;
		}
	}
	return cli_no_args(cmd, argc, argv);
}
