/* SPDX-License-Identifier: MIT */
/* The ClientsReply and SessionsReply: who is connected and which sessions
 * they hold (never a key byte), as client_may_see() allows. */
#ifndef CRYPTOD_LISTING_H
#define CRYPTOD_LISTING_H

#include <cryptod/compiler.h>

#include <stdint.h>

struct client;

/* Build and send a ClientsReply / SessionsReply. 0 or -errno. */
CRD_MUST_CHECK int clients_reply(struct client *c, uint32_t seq);
CRD_MUST_CHECK int sessions_reply(struct client *c, uint32_t seq);

#endif
