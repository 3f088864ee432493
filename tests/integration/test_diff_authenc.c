// SPDX-License-Identifier: MIT
/*
 * Differential test of the authenc family against OpenSSL's CBC and HMAC
 * (diff_common.h): aes-cbc-hmac-sha1 and aes-cbc-hmac-sha256 (encrypt
 * then MAC over AAD || ciphertext, HMAC keys of 1..64 bytes, the default
 * or the explicit tag length) with forgeries of the tag, the data or the
 * AAD; and aes-cbc-null, whose AAD must be ignored.
 *
 * TEST_SEED replays a run. Exit: 0 all passed, 1 any mismatch.
 */
#include "diff_common.h"

int main(void)
{
	return diff_main(DIFF_AUTHENC);
}
