// SPDX-License-Identifier: MIT
/*
 * Differential test of the MACs and digests against OpenSSL
 * (diff_common.h): hmac-sha1..512 with keys of 0..256 bytes (around the
 * 64- and 128-byte blocks, where longer keys are hashed first), sha1..512,
 * aes-cmac (16, 24, 32) and aes-xcbc-mac (against RFC 3566 written out in
 * mac_common.c), with the default and truncated tags; generate, verify,
 * and forgeries of the tag or the data, which must fail without a byte
 * of the message changing. Three queues in parallel (one client process
 * each) on a daemon with two workers.
 *
 * TEST_SEED replays a run. Exit: 0 all passed, 1 any mismatch.
 */
#include "diff_common.h"

int main(void)
{
	return diff_main(DIFF_MAC);
}
