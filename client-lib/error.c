/* SPDX-License-Identifier: MIT */
#include "internal.h"

#include <string.h>

#include "names.h"

const char *cc_strerror(int err)
{
	const char *t = crd_status_text(err);
	if (t)
		return t;
	if (err < 0 && err > -4096)
		return strerror(
			-err); /* glibc's table is static and thread-safe */
	return "unknown error";
}
