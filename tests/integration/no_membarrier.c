// SPDX-License-Identifier: MIT
/*
 * Runs $NO_MEMBARRIER_EXEC with our arguments under a seccomp filter that
 * refuses membarrier(2) with EPERM, as a unit's SystemCallFilter or a
 * container's profile may: the daemon then finds it unusable, and its
 * clients fence (ring_abi.h, CRD_FEAT_SQ_MEMBARRIER). It checks that the
 * filter took before it runs the program. test_sq_wakeup runs the daemon
 * through it.
 *
 * Exit: the program's, or 127 when the filter or the exec failed.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	(void)argc;
	const char *prog = getenv("NO_MEMBARRIER_EXEC");
	if (!prog || !*prog) {
		fprintf(stderr, "no_membarrier: NO_MEMBARRIER_EXEC unset\n");
		return 127;
	}
	struct sock_filter f[] = {
		/* Another architecture's calls: allowed (this test's own). */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp)) {
		fprintf(stderr, "no_membarrier: seccomp: %s\n",
			strerror(errno));
		return 127;
	}
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0) != -1 ||
	    errno != EPERM) {
		fprintf(stderr, "no_membarrier: the filter did not take\n");
		return 127;
	}
	execv(prog, argv);
	fprintf(stderr, "no_membarrier: %s: %s\n", prog, strerror(errno));
	return 127;
}
