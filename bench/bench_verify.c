/* SPDX-License-Identifier: MIT */
/*
 * Before a size is timed: one burst through the daemon must give, byte
 * for byte, what the in-process reference gives (data and tags, in
 * order, every op CC_OK), and that reference must agree with OpenSSL, so
 * that a wrong reference cannot vouch for a wrong daemon. Decrypt also
 * checks that a forged tag is refused and the output zeroed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

int bench_compare_outputs(const char *alg, enum cc_dir dir, unsigned n,
			  const struct bench_layout *x,
			  const struct bench_layout *y, const char *xname,
			  const char *yname)
{
	const uint32_t len = x->len;
	unsigned i;
	size_t at;

	for (i = 0; i < n; i++) {
		if (!x->tag_only) {
			at = first_diff(bench_slot_dst(x, i),
					bench_slot_dst(y, i), len);
			if (at < len) {
				bench_err(
					"%s %u B: op %u: output "
					"differs at byte %zu\n  %s\n  vs %s\n",
					alg, len, i, at, xname, yname);
				return -EBADMSG;
			}
		}
		if (dir == CC_ENCRYPT && x->tag_len &&
		    memcmp(bench_slot_tag(x, i), bench_slot_tag(y, i),
			   x->tag_len)) {
			bench_err("%s %u B: op %u: tag differs\n"
				  "  %s\n  vs %s\n",
				  alg, len, i, xname, yname);
			return -EBADMSG;
		}
	}
	return 0;
}

/* The verification's comparisons stop the benchmark of the size. */
static int compare(const struct bench_verify *v, const struct bench_layout *x,
		   const struct bench_layout *y, const char *xname,
		   const char *yname)
{
	int rc =
		bench_compare_outputs(v->alg, v->dir, v->n, x, y, xname, yname);

	if (rc < 0)
		fputs("benchmark aborted\n", stderr);
	return rc;
}

/* A forged tag must be refused, or decrypt timings mean nothing. */
static int verify_forgery(const struct bench_verify *v)
{
	const struct bench_layout *l = v->la;
	uint8_t *tag = bench_slot_tag(l, 0), *dst = bench_slot_dst(l, 0);
	size_t i;
	int rc;

	tag[0] ^= 0x80;
	rc = bench_daemon_run_once(v->d, 1, v->status);
	tag[0] ^= 0x80;
	if (rc < 0)
		return rc;
	if (v->status[0] != CC_ERR_AUTH_FAILED) {
		bench_err("%s %u B: decrypt with a forged tag "
			  "completed with '%s', expected '%s'\n",
			  v->alg, l->len, cc_strerror(v->status[0]),
			  cc_strerror(CC_ERR_AUTH_FAILED));
		return -EBADMSG;
	}
	if (l->tag_only)
		return 0; /* GMAC writes no data to zero */
	for (i = 0; i < l->len; i++) {
		if (dst[i]) {
			bench_err("%s %u B: output not zeroed "
				  "after a failed tag check (byte %zu)\n",
				  v->alg, l->len, i);
			return -EBADMSG;
		}
	}
	return 0;
}

int bench_verify_size(const struct bench_verify *v)
{
	const uint32_t len = v->la->len;
	unsigned i;
	int rc;

	rc = bench_ref_burst(v->ref, v->lb, v->dir, 0, v->n, true);
	if (rc != 0) {
		bench_err("internal error: %s %u B: %s %s\n", v->alg, len,
			  v->ref->desc,
			  rc < 0 ? strerror(-rc)
				 : "refused the tags it sealed itself");
		return rc < 0 ? rc : -EINVAL;
	}
	if (v->cross) {
		rc = bench_ref_burst(v->cross, v->lx, v->dir, 0, v->n, true);
		if (rc != 0) {
			bench_err("internal error: %s %u B: %s "
				  "%s\n",
				  v->alg, len, v->cross->desc,
				  rc < 0 ? strerror(-rc)
					 : "refused the reference's tags");
			return rc < 0 ? rc : -EINVAL;
		}
		rc = compare(v, v->lb, v->lx, v->ref->desc, v->cross->desc);
		if (rc < 0)
			return rc;
	}

	rc = bench_daemon_run_once(v->d, v->n, v->status);
	if (rc < 0)
		return rc;
	for (i = 0; i < v->n; i++) {
		if (v->status[i]) {
			bench_err("%s %u B: op %u failed in the "
				  "daemon: %s\n",
				  v->alg, len, i, cc_strerror(v->status[i]));
			return -EBADMSG;
		}
	}
	rc = compare(v, v->la, v->lb, "the daemon", v->ref->desc);
	if (rc < 0)
		return rc;
	if (v->dir == CC_DECRYPT && v->la->tag_len)
		return verify_forgery(v);
	return 0;
}
