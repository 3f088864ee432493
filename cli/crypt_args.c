/* SPDX-License-Identifier: MIT */
/*
 * What encrypt, decrypt, digest and mac parse alike: hex options, keys
 * (from argv, wiped in place, or from a file) and numbers; and how each
 * of them starts (crypt_begin).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "crypt.h"
#include "hex.h"

int crypt_parse_hex(struct crypt_args *a, const char *opt, const char *hex,
		    uint8_t *out, size_t max, unsigned *len)
{
	int n = hex_decode(hex, out, max);

	if (n == -E2BIG)
		return cli_usage_err(a->cmd, "%s: longer than %zu bytes", opt,
				     max);
	if (n < 0) {
		char why[128];

		hex_why(hex, why, sizeof(why));
		return cli_usage_err(a->cmd, "%s: %s", opt, why);
	}
	*len = (unsigned)n;
	return 0;
}

/* Where a key option goes: the cipher (or MAC) key or the HMAC key. */
struct key_slot {
	const char *opt;
	uint8_t *buf;
	size_t max;
	unsigned *len;
	int *have;
};

static struct key_slot key_slot(struct crypt_args *a, int auth, int file)
{
	if (auth)
		return (struct key_slot){ file ? "--auth-key-file"
					       : "--auth-key",
					  a->auth_key, sizeof(a->auth_key),
					  &a->auth_key_len, &a->have_auth_key };
	return (struct key_slot){ file ? "--key-file" : "--key", a->key,
				  a->key_max, &a->key_len, &a->have_key };
}

/*
 * A key, from argv. The string is wiped in place once decoded: argv
 * lives in /proc/PID/cmdline, readable by every user. getopt has finished
 * with an option's argument when it returns it, and only ever permutes
 * argv pointers, so writing into the string is safe.
 */
int crypt_parse_key_arg(struct crypt_args *a, int auth, char *hex)
{
	struct key_slot k = key_slot(a, auth, 0);
	int ret;

	ret = crypt_parse_hex(a, k.opt, hex, k.buf, k.max, k.len);
	explicit_bzero(hex, strlen(hex));
	*k.have = !ret;
	return ret;
}

/* A key as hex text in a file; surrounding white space is ignored. */
int crypt_parse_key_file(struct crypt_args *a, int auth, const char *path)
{
	struct key_slot k = key_slot(a, auth, 1);
	char buf[CLI_KEYFILE_MAX + 1];
	char *s, *end;
	ssize_t n;
	size_t len = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cli_usage_err(a->cmd, "%s %s: %s", k.opt, path,
				     strerror(errno));
	do {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n > 0)
			len += (size_t)n;
	} while ((n > 0 && len < sizeof(buf) - 1) || (n < 0 && errno == EINTR));
	ret = n < 0 ? -errno : 0;
	close(fd);
	buf[len] = '\0';
	if (ret < 0) {
		explicit_bzero(buf, sizeof(buf));
		return cli_usage_err(a->cmd, "%s %s: %s", k.opt, path,
				     strerror(-ret));
	}

	s = buf + strspn(buf, " \t\r\n");
	end = s + strcspn(s, " \t\r\n");
	if (*(end + strspn(end, " \t\r\n"))) {
		explicit_bzero(buf, sizeof(buf));
		return cli_usage_err(a->cmd, "%s %s: not one hex string", k.opt,
				     path);
	}
	*end = '\0';
	ret = crypt_parse_hex(a, k.opt, s, k.buf, k.max, k.len);
	explicit_bzero(buf, sizeof(buf));
	*k.have = !ret;
	return ret;
}

int crypt_parse_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-')
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

void crypt_begin(struct crypt_args *a)
{
	/* No core file, no same-user ptrace: keys and plaintext stay here. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

	/* main() filled closed descriptors with /dev/null; these commands
	 * fail when they need the stream that was closed. */
	a->stdin_closed = !!(cli_closed_fds & 1);
	a->stdout_closed = !!(cli_closed_fds & 2);
}

int crypt_opt_tag_len(struct crypt_args *a, const char *opt, const char *arg)
{
	if (crypt_parse_uint(arg, CLI_TAG_MAX, &a->tag_len))
		return cli_usage_err(a->cmd,
				     "%s: '%s' is not a number up to %d", opt,
				     arg, CLI_TAG_MAX);
	a->tag_len_set = 1;
	return 0;
}

/* A shared option: 0, or -EINVAL (reported; getopt's own unknown or
 * incomplete options were reported by getopt). */
static int crypt_opt_shared(struct crypt_args *a, struct cli *cli, int c,
			    char *arg)
{
	switch (c) {
	case 'a':
		return crypt_alg_parse(a, arg);
	case 'k':
		return crypt_parse_key_arg(a, 0, arg);
	case CRYPT_OPT_KEY_FILE:
		return crypt_parse_key_file(a, 0, arg);
	case CRYPT_OPT_KEY_NAME:
		a->key_name = arg;
		return 0;
	case CRYPT_OPT_TAG_LEN:
		return crypt_opt_tag_len(a, "--tag-len", arg);
	case CRYPT_OPT_IN:
		a->in_path = arg;
		return 0;
	case CRYPT_OPT_OUT:
		a->out_path = arg;
		return 0;
	case CRYPT_OPT_ENGINE:
		a->engine = arg;
		return 0;
	case CRYPT_OPT_PROGRESS:
		return crypt_progress_parse(a, arg);
	case 's':
		cli->socket = arg;
		return 0;
	default:
		return -EINVAL; /* getopt said why */
	}
}

int crypt_main(struct cli *cli, const struct crypt_front *f, int argc,
	       char **argv)
{
	struct crypt_args *a;
	int c, ret = 0;

	/* On the heap: 64 KiB of AAD buffer is too much for a stack frame
	 * in a tool that may run with a small ulimit -s. */
	a = calloc(1, sizeof(*a));
	if (!a) {
		cli_err("out of memory");
		return CLI_EXIT_FAIL;
	}
	f->init(a);
	crypt_begin(a);

	optind = 0;
	while (!ret && (c = getopt_long(argc, argv, f->shortopts, f->opts,
					NULL)) != -1) {
		ret = f->opt(a, c, optarg);
		if (ret == -ENOENT)
			ret = crypt_opt_shared(a, cli, c, optarg);
	}
	if (!ret)
		ret = cli_no_args(a->cmd, argc, argv);
	if (!ret && f->check)
		ret = f->check(a);
	if (!ret)
		ret = crypt_args_check(a);
	if (!ret)
		ret = crypt_caps_check(cli, a);
	if (ret)
		ret = ret > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	else
		ret = crypt_run(cli, a);
	crypt_args_wipe(a);
	free(a);
	return ret;
}
