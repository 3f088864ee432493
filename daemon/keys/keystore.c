/* SPDX-License-Identifier: MIT */
#include "keystore.h"
#include "log.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/* State is the control thread's; workers only read slot contents. */
static struct {
	uint8_t *base; /* owned mapping, nslots * KS_SLOT_SIZE */
	size_t size;
	unsigned nslots;
	unsigned used;
	int locked;
	void *free_list; /* intrusive: first word of a free slot */
} ks;

_Static_assert(KS_SLOT_SIZE % 64 == 0, "slots keep 64-byte alignment");

int ks_init(unsigned nslots)
{
	ks.size = (size_t)nslots * KS_SLOT_SIZE;
	void *p = mmap(NULL, ks.size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	ks.base = p;
	ks.nslots = nslots;
	if (madvise(p, ks.size, MADV_DONTDUMP) < 0)
		log_warn("keystore: MADV_DONTDUMP failed: %s", strerror(errno));
	/* Keys must never reach swap. Without CAP_IPC_LOCK the rlimit may be
	 * too small; run on, but say so. */
	ks.locked = mlock(p, ks.size) == 0;
	if (!ks.locked)
		log_warn("keystore: mlock of %zu bytes failed (%s): key memory "
			 "may be swapped; raise LimitMEMLOCK",
			 ks.size, strerror(errno));
	for (unsigned i = nslots; i-- > 0;) {
		void *slot = ks.base + (size_t)i * KS_SLOT_SIZE;
		*(void **)slot = ks.free_list;
		ks.free_list = slot;
	}
	return 0;
}

void ks_fini(void)
{
	if (!ks.base)
		return;
	explicit_bzero(ks.base, ks.size);
	if (ks.locked)
		munlock(ks.base, ks.size);
	munmap(ks.base, ks.size);
	memset(&ks, 0, sizeof(ks));
}

void *ks_alloc(void)
{
	void *slot = ks.free_list;
	if (!slot)
		return NULL;
	ks.free_list = *(void **)slot;
	memset(slot, 0, KS_SLOT_SIZE);
	ks.used++;
	return slot;
}

void ks_free(void *slot)
{
	if (!slot)
		return;
	explicit_bzero(slot, KS_SLOT_SIZE);
	*(void **)slot = ks.free_list;
	ks.free_list = slot;
	ks.used--;
}

unsigned ks_in_use(void)
{
	return ks.used;
}

int ks_locked(void)
{
	return ks.locked;
}

void *ks_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* As ks_init: undumpable always, locked where the limit allows (the
	 * keystore's own warning already told the operator). */
	if (madvise(p, len, MADV_DONTDUMP) < 0) {
		int e = errno;
		munmap(p, len);
		errno = e;
		return NULL;
	}
	(void)mlock(p, len);
	return p;
}

void ks_unmap(void *p, size_t len)
{
	if (!p)
		return;
	explicit_bzero(p, len);
	munlock(p, len);
	munmap(p, len);
}
