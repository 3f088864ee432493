/* SPDX-License-Identifier: MIT */
/* Annotations for the daemon's and the library's internals (not
 * installed: the public header stays plain C). */
#ifndef CRYPTOD_COMPILER_H
#define CRYPTOD_COMPILER_H

/* The result says whether it worked (0 / a count, or -errno): ignoring it
 * is a bug the compiler should point at (s2n's must-use results). */
#define CRD_MUST_CHECK __attribute__((warn_unused_result))

#endif
