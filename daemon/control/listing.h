/* SPDX-License-Identifier: MIT */
/* The ClientsReply, SessionsReply and ProgramsReply: who is connected,
 * which sessions they hold (never a key byte), and what each program did
 * (programs.h), as client_may_see() allows. */
#ifndef CRYPTOD_LISTING_H
#define CRYPTOD_LISTING_H

#include <cryptod/compiler.h>

#include <stdint.h>

struct client;

/* Build and send a ClientsReply / SessionsReply. 0 or -errno. */
CRD_MUST_CHECK int clients_reply(struct client *c, uint32_t seq);
CRD_MUST_CHECK int sessions_reply(struct client *c, uint32_t seq);
/* Build and send a ProgramsReply for viewer. 0 or -errno. */
CRD_MUST_CHECK int programs_reply(struct client *viewer, uint32_t seq);

#endif
