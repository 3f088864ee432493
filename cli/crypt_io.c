/* SPDX-License-Identifier: MIT */
/*
 * Input and output of encrypt, decrypt, digest and mac.
 *
 * Input: --in FILE or stdin; its size is known when it is a regular file,
 * else (a pipe) it is read to the end. AES-CCM needs the length up front:
 * from a pipe it is spooled to an unlinked temporary file first.
 *
 * Output, to its destination only once the command succeeded:
 *   --out FILE (a file, or a name not taken yet): written to a temporary
 *     file beside it (".FILE.XXXXXX", O_EXCL, mode 0600 or that of the
 *     file it replaces; a symlink's target, as open(2) would), fsync'ed and
 *     renamed over FILE on success; unlinked on failure or on SIGINT,
 *     SIGTERM, SIGHUP or SIGPIPE. FILE is never half written.
 *   stdout, or --out naming something else (a FIFO, a device): written
 *     straight out, except a streamed AEAD decrypt's plaintext, which is
 *     unverified until the tag at the very end has been checked: it goes
 *     to an unlinked temporary file in $TMPDIR (O_TMPFILE, else mkstemp
 *     and unlink) and is copied out once the tag verified, unless
 *     --release-unverified.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crypt.h"

int crypt_read_full(int fd, void *buf, size_t len, size_t *got)
{
	uint8_t *p = buf;
	ssize_t n;

	*got = 0;
	while (*got < len) {
		n = read(fd, p + *got, len - *got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		*got += (size_t)n;
	}
	return 0;
}

int crypt_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A private anonymous mapping: no copy is left behind by a realloc, and
 * it stays out of a core file even if the process were dumpable. */
void *crypt_buf_alloc(size_t len)
{
	void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len ? len : 1, MADV_DONTDUMP);
	return p;
}

void crypt_buf_free(void *buf, size_t len)
{
	if (!buf)
		return;
	explicit_bzero(buf, len);
	munmap(buf, len ? len : 1);
}

/* ---- input ---- */

int crypt_src_open(struct crypt_args *a, struct crypt_src *in)
{
	struct stat st;
	off_t pos;

	in->fd = STDIN_FILENO;
	in->size = -1;
	in->owned = 0;
	if (a->in_path) {
		in->fd = open(a->in_path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0)
			return cli_usage_err(a->cmd, "--in %s: %s", a->in_path,
					     strerror(errno));
		in->owned = 1;
	} else if (a->stdin_closed) {
		cli_err("%s: stdin is closed (give --in FILE)", a->cmd);
		return -EBADF;
	}
	if (fstat(in->fd, &st) < 0)
		return 0;
	if (S_ISDIR(st.st_mode)) {
		crypt_src_close(in);
		return cli_usage_err(a->cmd, "%s is a directory",
				     a->in_path ? a->in_path : "stdin");
	}
	/* stdin may be a file read partly already ((head -c1; cryptoctl) <f) */
	pos = lseek(in->fd, 0, SEEK_CUR);
	if (S_ISREG(st.st_mode) && pos >= 0 && pos <= st.st_size)
		in->size = st.st_size - pos;
	return 0;
}

void crypt_src_close(struct crypt_src *in)
{
	if (in->owned && in->fd >= 0)
		close(in->fd);
	in->fd = -1;
	in->owned = 0;
}

/* An unlinked temporary file in $TMPDIR (else /tmp): -errno or the fd. */
static int tmp_anon(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* O_TMPFILE needs kernel and file system support. */
	if ((size_t)snprintf(path, sizeof(path), "%s/cryptoctl.XXXXXX", dir) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

static int copy_fd(int from, int to)
{
	static uint8_t buf[64 << 10];
	size_t got;
	ssize_t n;
	int ret;

	/* sendfile() from a file to anything (a pipe, a file, a socket). */
	for (;;) {
		n = sendfile(to, from, NULL, 1u << 30);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			continue;
		if (!n)
			return 0;
		if (errno != EINVAL && errno != ENOSYS)
			return -errno;
		break;
	}
	for (;;) {
		ret = crypt_read_full(from, buf, sizeof(buf), &got);
		if (!ret && got)
			ret = crypt_write_all(to, buf, got);
		if (ret || got < sizeof(buf))
			break;
	}
	explicit_bzero(buf, sizeof(buf));
	return ret;
}

int crypt_src_spool(struct crypt_args *a, struct crypt_src *in)
{
	struct stat st;
	int fd, ret;

	fd = tmp_anon();
	if (fd < 0) {
		cli_err("%s: a temporary file for the input: %s", a->cmd,
			strerror(-fd));
		return fd;
	}
	ret = copy_fd(in->fd, fd);
	if (!ret && (fstat(fd, &st) < 0 || lseek(fd, 0, SEEK_SET) < 0))
		ret = -errno;
	if (ret < 0) {
		cli_err("%s: spooling the input: %s", a->cmd, strerror(-ret));
		close(fd);
		return ret;
	}
	crypt_src_close(in);
	in->fd = fd;
	in->owned = 1;
	in->size = st.st_size;
	return 0;
}

/* ---- output ---- */

/* The named temporary file beside --out, for the signal handler. */
static char cleanup_path[4096];

static void on_signal(int sig)
{
	if (cleanup_path[0])
		unlink(cleanup_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void cleanup_set(const char *path)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction sa = { .sa_handler = on_signal };
	size_t i;

	snprintf(cleanup_path, sizeof(cleanup_path), "%s", path);
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/*
 * fd: ".BASE.XXXXXX" in the directory of path, O_EXCL, mode 0600 or that
 * of the file it replaces. A symlink is followed, as open(2) would: the
 * rename replaces its target, not the link.
 */
static int tmp_beside(struct crypt_args *a, struct crypt_sink *out)
{
	static char target[4096]; /* one output per process */
	char d[4096], b[4096];
	struct stat st;
	int n, have = stat(a->out_path, &st) == 0;

	if (strlen(a->out_path) >= sizeof(d))
		return cli_usage_err(a->cmd, "--out: name too long");
	snprintf(target, sizeof(target), "%s", a->out_path);
	struct stat lst;
	if (lstat(a->out_path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		char *r = realpath(a->out_path, NULL);
		if (!r || strlen(r) >= sizeof(target)) {
			free(r);
			return cli_usage_err(a->cmd,
					     "--out %s: cannot follow the "
					     "link",
					     a->out_path);
		}
		strcpy(target, r);
		free(r);
	}
	strcpy(d, target);
	strcpy(b, target);
	n = snprintf(out->tmp, sizeof(out->tmp), "%s/.%s.XXXXXX", dirname(d),
		     basename(b));
	if (n < 0 || (size_t)n >= sizeof(out->tmp))
		return cli_usage_err(a->cmd, "--out: name too long");
	/* Blocked while the name is being made: a signal between mkostemp()
	 * and cleanup_set() would leave the file behind. */
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	out->fd = mkostemp(out->tmp, O_CLOEXEC);
	n = errno;
	if (out->fd >= 0) {
		cleanup_set(out->tmp);
		if (have && S_ISREG(st.st_mode))
			(void)fchmod(out->fd, st.st_mode & 07777);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (out->fd < 0) {
		out->tmp[0] = '\0';
		return cli_usage_err(a->cmd,
				     "--out %s: cannot create a file "
				     "beside it: %s",
				     a->out_path, strerror(n));
	}
	out->path = target;
	return 0;
}

int crypt_sink_open(struct crypt_args *a, struct crypt_sink *out, int verify)
{
	struct stat st;
	int fd;

	memset(out, 0, sizeof(*out));
	out->fd = out->dest = STDOUT_FILENO;
	if (a->out_path) {
		if (stat(a->out_path, &st) < 0 || S_ISREG(st.st_mode))
			return tmp_beside(a, out);
		if (S_ISDIR(st.st_mode))
			return cli_usage_err(a->cmd, "--out %s is a directory",
					     a->out_path);
		/* A FIFO, a device: written like stdout. */
		fd = open(a->out_path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return cli_usage_err(a->cmd, "--out %s: %s",
					     a->out_path, strerror(errno));
		out->fd = out->dest = fd;
		out->owned_dest = 1;
	} else if (a->stdout_closed) {
		cli_err("%s: stdout is closed (give --out FILE)", a->cmd);
		return -EBADF;
	}
	if (!verify || a->release_unverified)
		return 0;
	fd = tmp_anon();
	if (fd < 0) {
		cli_err("%s: a temporary file for the unverified plaintext: "
			"%s (--release-unverified does without)",
			a->cmd, strerror(-fd));
		crypt_sink_abort(out);
		return fd;
	}
	out->fd = fd;
	out->spool = 1;
	return 0;
}

int crypt_sink_write(struct crypt_args *a, struct crypt_sink *out,
		     const void *buf, size_t len)
{
	int ret = crypt_write_all(out->fd, buf, len);

	if (ret < 0)
		cli_err("%s: writing %s: %s", a->cmd,
			out->path     ? out->path
			: out->spool  ? "the temporary file"
			: a->out_path ? a->out_path
				      : "stdout",
			strerror(-ret));
	return ret;
}

static void dir_sync(const char *path)
{
	char d[4096];
	int fd;

	snprintf(d, sizeof(d), "%s", path);
	fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int crypt_sink_commit(struct crypt_args *a, struct crypt_sink *out)
{
	const char *what = "stdout";
	int ret = 0;

	if (out->path) {
		what = out->path;
		if (fsync(out->fd) < 0 || close(out->fd) < 0) {
			ret = -errno;
		} else {
			out->fd = -1;
			if (rename(out->tmp, out->path) < 0)
				ret = -errno;
			else
				out->tmp[0] = '\0';
		}
		if (!ret) {
			cleanup_path[0] = '\0';
			dir_sync(out->path);
		}
	} else if (out->spool) {
		if (lseek(out->fd, 0, SEEK_SET) < 0)
			ret = -errno;
		else
			ret = copy_fd(out->fd, out->dest);
		if (a->out_path)
			what = a->out_path;
	}
	if (ret < 0) {
		cli_err("%s: writing %s: %s", a->cmd, what, strerror(-ret));
		crypt_sink_abort(out);
		return CLI_EXIT_FAIL;
	}
	crypt_sink_abort(out); /* closes what is left */
	return CLI_EXIT_OK;
}

void crypt_sink_abort(struct crypt_sink *out)
{
	if (out->tmp[0]) {
		unlink(out->tmp);
		out->tmp[0] = '\0';
		cleanup_path[0] = '\0';
	}
	if ((out->path || out->spool) && out->fd >= 0) {
		/* The spool's plaintext goes with its last descriptor;
		 * truncating first frees its blocks at once. */
		if (out->spool && ftruncate(out->fd, 0) < 0) {
			/* close() frees them all the same */
		}
		close(out->fd);
	}
	if (out->owned_dest && out->dest >= 0)
		close(out->dest);
	out->fd = out->dest = -1;
	out->path = NULL;
	out->spool = out->owned_dest = 0;
}
