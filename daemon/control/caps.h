/* SPDX-License-Identifier: MIT */
/* The CapabilitiesReply: every engine's algorithms with their {min, max,
 * increment} ranges, and why an unavailable one is unavailable. */
#ifndef CRYPTOD_CAPS_H
#define CRYPTOD_CAPS_H

#include <cryptod/compiler.h>

#include <stdint.h>

struct client;

/* Build and send a CapabilitiesReply. 0 or -errno. */
CRD_MUST_CHECK int caps_reply(struct client *c, uint32_t seq);

#endif
