/* SPDX-License-Identifier: MIT */
#include "internal.h"

#include <string.h>

const char *cc_strerror(int err)
{
	switch (err) {
	case CC_OK:
		return "success";
	case CC_ERR_AUTH_FAILED:
		return "authentication failed: tag mismatch";
	case CC_ERR_BAD_DESC:
		return "malformed descriptor";
	case CC_ERR_NO_SESSION:
		return "unknown session";
	case CC_ERR_BAD_RANGE:
		return "buffer outside the arena or overlapping";
	case CC_ERR_BAD_PARAM:
		return "unsupported IV, tag, AAD or data length";
	case CC_ERR_ENGINE:
		return "engine error";
	case CC_ERR_SHUTDOWN:
		return "daemon shut down before running the op";
	case CC_ERR_POLICY:
		return "refused by cryptod's key policy";
	case CC_ERR_ACCESS:
		return "not allowed by cryptod's access policy";
	}
	if (err < 0 && err > -4096)
		return strerror(
			-err); /* glibc's table is static and thread-safe */
	return "unknown error";
}
