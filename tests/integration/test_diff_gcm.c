// SPDX-License-Identifier: MIT
/*
 * Differential test of the GCM family against OpenSSL (diff_common.h):
 * aes-gcm and aes-gmac on every engine that claims them, tags of every
 * allowed length (4, 8, 12..16 and the default), IVs of 1..16 bytes
 * where the engine takes them (GCM on openssl), AAD up to 65535 bytes
 * and up to 65535 bytes less the payload; forgeries of the tag, the data
 * or the AAD; GMAC, which writes nothing but the tag, must leave every
 * byte of the data and the destination as it was.
 *
 * TEST_SEED replays a run. Exit: 0 all passed, 1 any mismatch.
 */
#include "diff_common.h"

int main(void)
{
	return diff_main(DIFF_GCM);
}
