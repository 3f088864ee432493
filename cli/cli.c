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
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

int cli_line_open;

void cli_end_line(void)
{
	if (cli_line_open)
		fputc('\n', stderr);
	cli_line_open = 0;
}

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	cli_end_line();
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

int cli_conn_lost(int err)
{
	return err == -EPIPE || err == -ECONNRESET || err == -ENOTCONN ||
	       err == -ESHUTDOWN;
}

/*
 * The one text for a daemon that went away under a command, whatever
 * call saw it first (a write: EPIPE; a read: ECONNRESET): "Broken pipe"
 * would leave the operator guessing whose pipe.
 */
const char *cli_strerror(int err)
{
	if (cli_conn_lost(err))
		return "cryptod closed the connection: it stopped or restarted";
	return cc_strerror(err);
}

/* "name" of uid, or its number when it has none. */
static const char *user_name(uid_t uid, char *buf, size_t len)
{
	const struct passwd *pw = getpwuid(uid);

	if (pw)
		return pw->pw_name;
	snprintf(buf, len, "%u", (unsigned)uid);
	return buf;
}

static const char *group_name(gid_t gid, char *buf, size_t len)
{
	const struct group *gr = getgrgid(gid);

	if (gr)
		return gr->gr_name;
	snprintf(buf, len, "%u", (unsigned)gid);
	return buf;
}

/*
 * Connecting was refused by the file system: say which file refused, whose
 * it is and its mode, the group to join only when there is one that may
 * connect, and what sets them. The socket itself when it can be looked
 * at, else the first directory on the way we may not search.
 */
static void cli_access_hint(const char *path, int ret)
{
	/* Under systemd's socket activation cryptod.socket decides. */
	static const char sets[] =
		"socket_mode and socket_group in cryptod.conf(5) set its mode "
		"and group, its owner is the user cryptod runs as; under "
		"socket activation SocketUser=, SocketGroup=, SocketMode= in "
		"cryptod.socket";
	/* The system service's directory is systemd's RuntimeDirectory=. */
	static const char sets_dir[] =
		"'socket' in cryptod.conf(5) (or $CRYPTOD_SOCKET, --socket) "
		"names a socket elsewhere";
	const char *how;
	char dir[CLI_PATH_MAX], ub[16], gb[16];
	const char *what = "the socket";
	const char *u, *g;
	struct stat st;
	char *slash;

	strcpy(dir, path);
	if (stat(path, &st) < 0) {
		/* Which directory stops us: the first one we cannot search. */
		for (slash = strchr(dir + 1, '/'); slash;
		     slash = strchr(slash + 1, '/')) {
			*slash = '\0';
			if (access(dir, X_OK) < 0)
				break;
			*slash = '/';
		}
		if (!slash || stat(dir, &st) < 0) {
			cli_err("cannot connect to %s: %s", path,
				cc_strerror(ret));
			return;
		}
		what = dir;
	}
	how = S_ISDIR(st.st_mode) ? sets_dir : sets;
	u = user_name(st.st_uid, ub, sizeof(ub));
	g = group_name(st.st_gid, gb, sizeof(gb));
	/* Joining the group helps when the group may use it and it is not
	 * root's (nobody is told to join root's group). */
	if (st.st_gid != 0 &&
	    (st.st_mode & (S_ISDIR(st.st_mode) ? S_IXGRP : S_IWGRP)))
		cli_err("cannot connect to %s: %s - %s is %s:%s mode %04o: "
			"'sudo usermod -aG %s $USER', then log in again; %s",
			path, cc_strerror(ret), what, u, g,
			(unsigned)(st.st_mode & 07777), g, how);
	else
		cli_err("cannot connect to %s: %s - %s is %s:%s mode %04o, "
			"for %s only; %s",
			path, cc_strerror(ret), what, u, g,
			(unsigned)(st.st_mode & 07777), st.st_uid ? u : "root",
			how);
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
			cli->path, cli_strerror(ret));
		return ret;
	}
	if (ret == -EACCES || ret == -EPERM) {
		cli_access_hint(cli->path, ret);
		return ret;
	}
	if (ret < 0) {
		cli_err("cannot connect to %s: %s", cli->path,
			cli_strerror(ret));
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
		{ "exact", no_argument, NULL, 'X' },
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
		case 'X': /* byte counts as integers (clients, sessions) */
			if (!json)
				return cli_usage_err(cmd, "unrecognized option "
							  "'--exact'");
			tbl_exact = 1;
			break;
		default:
			return -EINVAL;
		}
	}
	return cli_no_args(cmd, argc, argv);
}
