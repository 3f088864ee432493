/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the control protocol's decoding of client packets
 * (proto/wire.c over protobuf-c), as the daemon does it: bounded size,
 * decode, read the fields the daemon reads, wipe and free.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Cryptod__Envelope *env = wire_decode(data, size);
	if (!env)
		return 0;
	if (size > CTL_MSG_MAX)
		abort(); /* the cap must hold */
	volatile size_t sink = 0;
	switch (env->body_case) {
	case CRYPTOD__ENVELOPE__BODY_HELLO:
		if (env->hello->client_name)
			sink += strlen(env->hello->client_name);
		break;
	case CRYPTOD__ENVELOPE__BODY_CREATE_SESSION:
		sink += env->create_session->key.len +
			env->create_session->auth_key.len;
		if (env->create_session->engine)
			sink += strlen(env->create_session->engine);
		break;
	case CRYPTOD__ENVELOPE__BODY_KEY_REQUEST:
		/* A name that decoded holds no NUL of its own: wire_decode
		 * refuses strings with one inside (corpus: *_nul_name). */
		if (env->key_request->name)
			sink += strlen(env->key_request->name);
		sink += env->key_request->key.len +
			env->key_request->wrapped.len;
		break;
	case CRYPTOD__ENVELOPE__BODY_OPEN_QUEUE:
		sink += env->open_queue->sq_entries +
			env->open_queue->arena_size;
		break;
	case CRYPTOD__ENVELOPE__BODY_USAGE_REPORT:
		if (env->usage_report->usage)
			sink += env->usage_report->usage->offloaded +
				env->usage_report->usage->fallbacks +
				env->usage_report->usage->inprocess;
		break;
	default:
		break;
	}
	(void)sink;
	wire_free(env);
	return 0;
}
