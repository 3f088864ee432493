/* SPDX-License-Identifier: MIT */
/* The framing tests' socketpair; see wire_pair.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire.h"
#include "wire_pair.h"

int pair_setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	int sv[2];

	if (!p)
		return -1;
	p->buf = malloc(CTL_MSG_MAX);
	if (!p->buf || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) {
		free(p->buf);
		free(p);
		return -1;
	}
	p->a = sv[0];
	p->b = sv[1];
	*state = p;
	return 0;
}

int pair_teardown(void **state)
{
	struct pair *p = *state;

	if (p->a >= 0)
		close(p->a);
	if (p->b >= 0)
		close(p->b);
	free(p->buf);
	free(p);
	return 0;
}

int pair_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}
