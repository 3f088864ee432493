// SPDX-License-Identifier: MIT
/* Descriptors passed by hand; see scm.h. */
#include "scm.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "wire.h"

ssize_t scm_send(int sock, const void *buf, size_t len, const int *fds,
		 unsigned n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * WIRE_SCM_MAX_FD)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t r;

	if (n > WIRE_SCM_MAX_FD)
		return -EINVAL;
	if (n) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	r = sendmsg(sock, &msg, MSG_NOSIGNAL);
	return r < 0 ? -errno : r;
}
