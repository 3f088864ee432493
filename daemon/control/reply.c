/* SPDX-License-Identifier: MIT */
#include "reply.h"

#include "wire.h"

int reply_error(int fd, uint32_t seq, int code, const char *msg)
{
	Cryptod__Error e = CRYPTOD__ERROR__INIT;
	e.code = code;
	e.message = (char *)msg;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_ERROR;
	env.error = &e;
	return wire_send(fd, &env, NULL, 0);
}

int reply_ack(int fd, uint32_t seq)
{
	Cryptod__Ack a = CRYPTOD__ACK__INIT;
	Cryptod__Envelope env = CRYPTOD__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = CRYPTOD__ENVELOPE__BODY_ACK;
	env.ack = &a;
	return wire_send(fd, &env, NULL, 0);
}
