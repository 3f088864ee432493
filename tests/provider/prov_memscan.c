/* SPDX-License-Identifier: MIT */
/*
 * prov_memscan: look for private keys' secret numbers in running
 * processes (issue 28's proof that a key never entered the program;
 * test_prov_pkey_scan.sh).
 *
 *   prov_memscan --key FILE [--key FILE]... PID...
 *
 * Each FILE is a PEM private key the test made: RSA (its d, p, q, dP, dQ,
 * qInv) or EC (its private scalar). Each PID's readable mappings
 * (/proc/PID/maps) are read through /proc/PID/mem and searched for any 8
 * bytes in a row of each number in the two forms OpenSSL holds it in:
 * big-endian (BN_bn2bin: the encodings) and BIGNUM's limbs (64-bit words,
 * least significant first, each little-endian: the number's
 * little-endian bytes, padded to whole words). A line per number found
 * (its file and name, the form, the pid, an address and the mapping;
 * never a byte of it) and per pid the bytes read and those that could not
 * be (pages /proc/PID/mem refuses: EIO).
 *
 * Exit 0: nothing found; 1: something found; 2: an error, including a
 * pid of which not one byte could be read (a scan that read nothing
 * proves nothing).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

enum { MAX_VALUES = 32, CHUNK = 1 << 20, WIN = 8, FILTER_BITS = 24 };

struct value {
	char name[96];	   /* "rsa.key:d" */
	unsigned found[2]; /* per form: hits */
};
static struct value values[MAX_VALUES];
static unsigned nvalues;
static const char *const form_name[2] = { "big-endian", "limbs" };

struct needle {
	uint64_t w; /* 8 bytes of a number, as they lie in memory */
	uint16_t value;
	uint8_t form;
};
static struct needle *needles;
static size_t nneedles, needles_cap;
static uint8_t *filter; /* 1 << FILTER_BITS bits: may w be a needle? */

static uint32_t hash64(uint64_t w)
{
	return (uint32_t)((w * 0x9e3779b97f4a7c15ULL) >> (64 - FILTER_BITS));
}

static int add_needles(unsigned v, int form, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i + WIN <= n; i++) {
		if (nneedles == needles_cap) {
			size_t cap = needles_cap ? 2 * needles_cap : 1024;
			struct needle *t = realloc(needles, cap * sizeof(*t));
			if (!t)
				return -ENOMEM;
			needles = t;
			needles_cap = cap;
		}
		struct needle *nd = &needles[nneedles++];
		memcpy(&nd->w, b + i, WIN);
		nd->value = (uint16_t)v;
		nd->form = (uint8_t)form;
		uint32_t h = hash64(nd->w);
		filter[h >> 3] |= (uint8_t)(1u << (h & 7));
	}
	return 0;
}

/* One number: its big-endian bytes and its limbs' bytes. */
static int add_value(const char *file, const char *what, const BIGNUM *bn)
{
	if (nvalues == MAX_VALUES)
		return -E2BIG;
	unsigned v = nvalues++;
	snprintf(values[v].name, sizeof(values[v].name), "%s:%s", file, what);
	int n = BN_num_bytes(bn);
	int padded = (n + 7) / 8 * 8;
	unsigned char *b = malloc((size_t)padded);
	if (!b)
		return -ENOMEM;
	int err = 0;
	if (BN_bn2bin(bn, b) != n)
		err = -EINVAL;
	if (!err)
		err = add_needles(v, 0, b, (size_t)n);
	if (!err && BN_bn2lebinpad(bn, b, padded) != padded)
		err = -EINVAL;
	if (!err)
		err = add_needles(v, 1, b, (size_t)padded);
	OPENSSL_cleanse(b, (size_t)padded);
	free(b);
	return err;
}

static int load_key(const char *path)
{
	static const struct {
		const char *param, *what;
	} rsa[] = {
		{ OSSL_PKEY_PARAM_RSA_D, "d" },
		{ OSSL_PKEY_PARAM_RSA_FACTOR1, "p" },
		{ OSSL_PKEY_PARAM_RSA_FACTOR2, "q" },
		{ OSSL_PKEY_PARAM_RSA_EXPONENT1, "dP" },
		{ OSSL_PKEY_PARAM_RSA_EXPONENT2, "dQ" },
		{ OSSL_PKEY_PARAM_RSA_COEFFICIENT1, "qInv" },
	},
	  ec[] = { { OSSL_PKEY_PARAM_PRIV_KEY, "priv" } };
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "prov_memscan: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	EVP_PKEY *pk = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!pk) {
		fprintf(stderr, "prov_memscan: %s: not a PEM private key\n",
			path);
		return -1;
	}
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	int is_rsa = EVP_PKEY_is_a(pk, "RSA");
	size_t n = is_rsa ? sizeof(rsa) / sizeof(rsa[0]) : 1;
	int err = is_rsa || EVP_PKEY_is_a(pk, "EC") ? 0 : -EINVAL;
	for (size_t i = 0; !err && i < n; i++) {
		BIGNUM *bn = NULL;
		const char *param = is_rsa ? rsa[i].param : ec[i].param;
		if (EVP_PKEY_get_bn_param(pk, param, &bn) != 1) {
			err = -EINVAL;
			break;
		}
		err = add_value(base, is_rsa ? rsa[i].what : ec[i].what, bn);
		BN_clear_free(bn);
	}
	EVP_PKEY_free(pk);
	if (err)
		fprintf(stderr, "prov_memscan: %s: not an RSA or EC key (%d)\n",
			path, err);
	return err ? -1 : 0;
}

static int needle_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct needle *)a)->w;
	uint64_t y = ((const struct needle *)b)->w;
	return x < y ? -1 : x > y;
}

/* Every needle equal to w, marked found; a line for a number's form the
 * first time in this pid. */
static void hit(uint64_t w, int pid, uint64_t addr, const char *map,
		unsigned seen[][2])
{
	struct needle key = { .w = w };
	struct needle *nd =
		bsearch(&key, needles, nneedles, sizeof(*nd), needle_cmp);
	if (!nd)
		return;
	while (nd > needles && nd[-1].w == w)
		nd--;
	for (; nd < needles + nneedles && nd->w == w; nd++) {
		struct value *v = &values[nd->value];
		v->found[nd->form]++;
		if (!seen[nd->value][nd->form]++)
			printf("found %s (%s) in pid %d at 0x%" PRIx64 " %s\n",
			       v->name, form_name[nd->form], pid, addr,
			       map[0] ? map : "[anon]");
	}
}

/* Returns the bytes read, or -1 when the pid's memory cannot be opened. */
static long long scan_pid(int pid, unsigned char *buf)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *maps = fopen(path, "r");
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!maps || fd < 0) {
		fprintf(stderr, "prov_memscan: pid %d: %s\n", pid,
			strerror(errno));
		if (maps)
			fclose(maps);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	unsigned seen[MAX_VALUES][2] = { { 0 } };
	long long total = 0, unreadable = 0;
	char line[4096];
	while (fgets(line, sizeof(line), maps)) {
		uint64_t lo, hi;
		char perms[8];
		int off = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s%n",
			   &lo, &hi, perms, &off) < 3 ||
		    perms[0] != 'r')
			continue;
		char *map = line + off;
		map += strspn(map, " ");
		map[strcspn(map, "\n")] = 0;
		if (!strcmp(map, "[vvar]") || !strcmp(map, "[vsyscall]") ||
		    !strcmp(map, "[vvar_vclock]"))
			continue;
		/* Read in chunks that overlap by WIN - 1 bytes, so that no
		 * window is lost at a chunk's edge; a page that cannot be
		 * read (EIO) is stepped over. */
		size_t have = 0;
		for (uint64_t a = lo; a < hi;) {
			size_t want = (size_t)(hi - a) < CHUNK
					      ? (size_t)(hi - a)
					      : CHUNK;
			ssize_t r = pread(fd, buf + have, want, (off_t)a);
			if (r <= 0) {
				have = 0;
				unreadable += (long long)(((a | 4095) + 1) - a);
				a = (a | 4095) + 1;
				continue;
			}
			total += r;
			size_t n = have + (size_t)r;
			for (size_t i = 0; i + WIN <= n; i++) {
				uint64_t w;
				memcpy(&w, buf + i, WIN);
				uint32_t h = hash64(w);
				if (filter[h >> 3] & (1u << (h & 7)))
					hit(w, pid, a - have + i, map, seen);
			}
			have = n < WIN - 1 ? n : WIN - 1;
			memmove(buf, buf + n - have, have);
			a += (uint64_t)r;
		}
	}
	fclose(maps);
	close(fd);
	if (total > 0)
		printf("pid %d: %lld bytes read, %lld unreadable\n", pid, total,
		       unreadable);
	return total;
}

int main(int argc, char **argv)
{
	filter = calloc(1, (size_t)1 << (FILTER_BITS - 3));
	unsigned char *buf = malloc(CHUNK + WIN);
	if (!filter || !buf)
		return 2;
	int i = 1;
	for (; i + 1 < argc && !strcmp(argv[i], "--key"); i += 2)
		if (load_key(argv[i + 1]))
			return 2;
	if (!nvalues || i == argc) {
		fprintf(stderr, "usage: prov_memscan --key FILE... PID...\n");
		return 2;
	}
	qsort(needles, nneedles, sizeof(*needles), needle_cmp);
	int rc = 0;
	for (; i < argc; i++) {
		int pid = atoi(argv[i]);
		long long n = scan_pid(pid, buf);
		if (n <= 0) {
			fprintf(stderr, "prov_memscan: pid %d: nothing read\n",
				pid);
			rc = 2;
		}
	}
	for (unsigned v = 0; v < nvalues && rc != 2; v++)
		if (values[v].found[0] || values[v].found[1])
			rc = 1;
	OPENSSL_cleanse(needles, nneedles * sizeof(*needles));
	OPENSSL_cleanse(buf, CHUNK + WIN);
	free(needles);
	free(filter);
	free(buf);
	return rc;
}
