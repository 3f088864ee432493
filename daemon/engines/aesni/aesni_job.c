/* SPDX-License-Identifier: MIT */
/* One cipher-only AES job run to completion: what every aesni stream file
 * (aesni_stream_*.c, stream_mac.c) builds on. Below the stream dispatcher
 * (aesni_stream.c), which calls those files and not this one. */
#include "aesni.h"

#include <errno.h>

int aesni_job_run(IMB_MGR *m, IMB_CIPHER_MODE mode, int encrypt,
		  const void *enc_keys, const void *dec_keys, unsigned key_len,
		  const uint8_t *src, uint8_t *dst, uint64_t n,
		  const uint8_t *iv)
{
	IMB_JOB *job = IMB_GET_NEXT_JOB(m), *ours = job, *back;
	int ok = 1, seen = 0;

	job->cipher_mode = mode;
	job->cipher_direction = encrypt ? IMB_DIR_ENCRYPT : IMB_DIR_DECRYPT;
	job->chain_order =
		encrypt ? IMB_ORDER_CIPHER_HASH : IMB_ORDER_HASH_CIPHER;
	job->hash_alg = IMB_AUTH_NULL;
	job->key_len_in_bytes = key_len;
	job->enc_keys = enc_keys;
	job->dec_keys = dec_keys;
	job->src = src;
	job->dst = dst;
	job->cipher_start_src_offset_in_bytes = 0;
	job->msg_len_to_cipher_in_bytes = n;
	job->iv = iv;
	job->iv_len_in_bytes = iv ? 16 : 0;
	job->user_data = NULL;
	/* With ipsec-mb's argument checks: a piece is rarer than a burst's
	 * op, and the checks are the last guard on what we built. CBC may
	 * wait in a multi-buffer lane: flush. */
	for (back = IMB_SUBMIT_JOB(m); back; back = IMB_GET_COMPLETED_JOB(m)) {
		ok &= back->status == IMB_STATUS_COMPLETED;
		seen |= back == ours;
	}
	while ((back = IMB_FLUSH_JOB(m))) {
		ok &= back->status == IMB_STATUS_COMPLETED;
		seen |= back == ours;
	}
	return ok && seen ? 0 : -EIO;
}
