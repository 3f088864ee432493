/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the configuration file parser (daemon/config/config.c). Any
 * bytes must either parse or fail with a "name:line: " message, and a
 * parsed configuration must hold only values inside the documented bounds
 * and print back (config_value_str) to something that parses again to the
 * same value.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "config.h"

static void check_bounds(const struct config *c)
{
	if (c->workers > MAX_WORKERS || c->spin_us > 1000000 ||
	    c->socket_mode > 0777 || c->n_allow_uids > CONFIG_ALLOW_MAX ||
	    c->n_allow_gids > CONFIG_ALLOW_MAX || c->lim.conns_per_uid < 1 ||
	    c->lim.conns_per_uid > MAX_CLIENTS || c->lim.queues < 1 ||
	    c->lim.queues > MAX_QUEUES_PER_CLIENT || c->lim.sessions < 1 ||
	    c->lim.sessions > MAX_SESSIONS_PER_CLIENT ||
	    c->lim.arena_bytes > MAX_ARENA_PER_CLIENT ||
	    c->lim.inflight > MAX_INFLIGHT_PER_CLIENT ||
	    c->keys.min_bits > 256 || c->pcrypt > CONFIG_PCRYPT_CREATE ||
	    memchr(c->socket, 0, sizeof(c->socket)) == NULL ||
	    memchr(c->pcrypt_algs, 0, sizeof(c->pcrypt_algs)) == NULL)
		abort();
	if (c->socket[0] && c->socket[0] != '/')
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config c, d;
	char err[CONFIG_ERR_MAX];
	config_defaults(&c);
	err[0] = '\0';
	int rc = config_parse(&c, (const char *)data, size, "f", err,
			      sizeof(err));
	if (rc) {
		if (strncmp(err, "f:", 2))
			abort(); /* every error names file and line */
		return 0;
	}
	check_bounds(&c);
	config_defaults(&d);
	for (unsigned k = 0; k < CK_N; k++) {
		const char *name = config_key_name(k);
		char v[CONFIG_LINE_MAX], w[CONFIG_LINE_MAX];
		if (!name)
			continue;
		config_value_str(&c, k, v, sizeof(v));
		if (config_set(&d, name, v, "rt", err, sizeof(err)))
			abort();
		config_value_str(&d, k, w, sizeof(w));
		if (strcmp(v, w))
			abort();
	}
	gid_t g[2] = { 1, 2 };
	(void)config_peer_allowed(&c, 12345, 12345, g, 2);
	return 0;
}
