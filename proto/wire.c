/* SPDX-License-Identifier: MIT */
#include "wire.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int wire_send(int sock, const Cryptod__Envelope *env, const int *fds,
	      unsigned nfds)
{
	size_t len = cryptod__envelope__get_packed_size(env);
	if (len > CTL_MSG_MAX)
		return -EMSGSIZE;
	if (nfds > CTL_MAX_FDS)
		return -EINVAL;

	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	cryptod__envelope__pack(env, buf);

	struct iovec iov = { .iov_base = buf, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(int) * CTL_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}

	ssize_t n;
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	int err = n < 0 ? -errno : 0;
	explicit_bzero(buf, len); /* may have carried a key */
	free(buf);
	if (!err && (size_t)n != len)
		err = -EIO;
	return err;
}

void wire_close_fds(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

ssize_t wire_recv_sink(int sock, uint8_t *buf, int *fds, unsigned max_fds,
		       unsigned *nfds, void (*sink)(int fd), unsigned *nsunk)
{
	struct iovec iov = { .iov_base = buf, .iov_len = CTL_MSG_MAX };
	/* Room for the most the kernel passes in one message: fds that do
	 * not fit would be dropped by the kernel in this thread, and the
	 * last reference to a file can take long to drop (fdreap.h). */
	union {
		char buf[CMSG_SPACE(sizeof(int) * WIRE_SCM_MAX_FD)];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};

	*nfds = 0;
	if (nsunk)
		*nsunk = 0;
	ssize_t n;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;

	/* Collect every fd that arrived; keep what fits, sink the rest. */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
	     c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < cnt; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (*nfds < max_fds) {
				fds[(*nfds)++] = fd;
				continue;
			}
			if (nsunk)
				(*nsunk)++;
			if (sink)
				sink(fd);
			else
				close(fd);
		}
	}

	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		wire_close_fds(fds, *nfds);
		*nfds = 0;
		return -EMSGSIZE;
	}
	if (n == 0) {
		wire_close_fds(fds, *nfds);
		*nfds = 0;
		return -EPIPE;
	}
	return n;
}

ssize_t wire_recv(int sock, uint8_t *buf, int *fds, unsigned max_fds,
		  unsigned *nfds)
{
	return wire_recv_sink(sock, buf, fds, max_fds, nfds, NULL, NULL);
}

/*
 * protobuf-c's allocations, each wiped whole when freed: any bytes field
 * of any message may carry a key (CreateSession's key and auth_key, and
 * whatever comes next), and the parser frees on its own the members of a
 * oneof that a later member replaces. Wiping every allocation covers all
 * of these without a list of fields to keep up to date.
 */
typedef union {
	size_t len;
	max_align_t align;
} wipe_hdr;

static void *wipe_alloc(void *ud, size_t len)
{
	(void)ud;
	if (len > SIZE_MAX - sizeof(wipe_hdr))
		return NULL;
	wipe_hdr *h = malloc(sizeof(*h) + len);
	if (!h)
		return NULL;
	h->len = len;
	return h + 1;
}

static void wipe_free(void *ud, void *p)
{
	(void)ud;
	if (!p)
		return;
	wipe_hdr *h = (wipe_hdr *)p - 1;
	explicit_bzero(h, sizeof(*h) + h->len);
	free(h);
}

static ProtobufCAllocator wipe_allocator = {
	.alloc = wipe_alloc,
	.free = wipe_free,
};

/* A varint at *p (at most 10 bytes, within end): its value, and *p past
 * it; -1 when it does not end in time. */
static int wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 70 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/*
 * Does every string field of the message d, encoded in [p, end), hold no
 * NUL? protobuf-c hands a string over as a C string, so "a\0/../evil"
 * would arrive as "a" and act on another name than the one sent: such a
 * message is refused whole. Walks the encoding by the descriptors (each
 * field's number and wire type; sub-messages recursively, at most
 * WIRE_DEPTH_MAX deep: the schema has no recursion, so deeper is not
 * ours). Unknown fields are skipped, as protobuf-c skips them; anything
 * malformed is refused here, as protobuf-c would refuse it.
 */
enum { WIRE_DEPTH_MAX = 8 };

static int wire_strings_ok(const ProtobufCMessageDescriptor *d,
			   const uint8_t *p, const uint8_t *end, unsigned depth)
{
	if (depth > WIRE_DEPTH_MAX)
		return 0;
	while (p < end) {
		uint64_t key, len;
		if (wire_varint(&p, end, &key) || key > UINT32_MAX)
			return 0;
		switch (key & 7) {
		case 0: /* varint */
			if (wire_varint(&p, end, &len))
				return 0;
			continue;
		case 1: /* 64-bit */
			len = 8;
			break;
		case 5: /* 32-bit */
			len = 4;
			break;
		case 2: { /* length-delimited */
			if (wire_varint(&p, end, &len) ||
			    len > (uint64_t)(end - p))
				return 0;
			const ProtobufCFieldDescriptor *f =
				protobuf_c_message_descriptor_get_field(
					d, (unsigned)(key >> 3));
			if (f && f->type == PROTOBUF_C_TYPE_STRING &&
			    memchr(p, 0, len))
				return 0;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    !wire_strings_ok(f->descriptor, p, p + len,
					     depth + 1))
				return 0;
			break;
		}
		default: /* groups (3, 4) and 6, 7: not ours */
			return 0;
		}
		if (len > (uint64_t)(end - p))
			return 0;
		p += len;
	}
	return 1;
}

Cryptod__Envelope *wire_decode(const uint8_t *buf, size_t len)
{
	if (len > CTL_MSG_MAX ||
	    !wire_strings_ok(&cryptod__envelope__descriptor, buf, buf + len, 0))
		return NULL;
	return cryptod__envelope__unpack(&wipe_allocator, len, buf);
}

void wire_free(Cryptod__Envelope *env)
{
	if (env) /* every allocation is wiped (wipe_free) */
		cryptod__envelope__free_unpacked(env, &wipe_allocator);
}

int wire_default_socket_path(char *buf, size_t len)
{
	const char *env = getenv("CRYPTOD_SOCKET");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;
	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (geteuid() == 0)
		n = snprintf(buf, len, "/run/cryptod/cryptod.sock");
	else if (xdg && *xdg)
		n = snprintf(buf, len, "%s/cryptod.sock", xdg);
	else
		n = snprintf(buf, len, "/tmp/cryptod-%u/cryptod.sock",
			     (unsigned)geteuid());
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
