// SPDX-License-Identifier: MIT
/*
 * Differential test of the ciphers without a tag against OpenSSL
 * (diff_common.h): aes-cbc, aes-ctr, aes-ecb, aes-xts and null on every
 * engine that claims them, at the edges of their length rules (block
 * multiples, XTS's 16 bytes and ciphertext stealing). CTR also with
 * counter blocks that carry across 32, 64 and 128 bits, against
 * EVP_aes_*_ctr. A tag buffer passed to them anyway must stay untouched.
 *
 * TEST_SEED replays a run. Exit: 0 all passed, 1 any mismatch.
 */
#include "diff_common.h"

int main(void)
{
	return diff_main(DIFF_CIPHER);
}
