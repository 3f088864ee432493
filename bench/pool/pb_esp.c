/* SPDX-License-Identifier: MIT */
/*
 * The seed's pcrypt experiment, redone through cryptod: an IPsec gateway's
 * crypto on 1420-byte packets, AES-192-CBC with HMAC-SHA1-96 (authenc)
 * and with a null digest, serial (one worker) against parallel (one
 * worker per CPU), in one direction (one queue encrypting) and in two
 * (a second queue, on its own thread, decrypting and verifying what it
 * encrypted before the run). ESP pads the 1420-byte inner packet plus its
 * 2-byte trailer to the cipher block: 1424 bytes are encrypted; Mbit/s
 * count the 1420-byte packets, as the seed did. The 8-byte ESP header is
 * the AAD, directly before the payload, so the daemon runs every op in
 * place in the arena.
 */
#include <stdio.h>
#include <string.h>

#include "poolbench.h"

enum {
	ESP_PACKET = 1420,
	ESP_CIPHER_LEN = (ESP_PACKET + 2 + 15) / 16 * 16, /* 1424 */
	ESP_ALGS = 2,
	ESP_DIRS = 2,
	ESP_MODES = 2, /* serial, parallel */
	ESP_CONFIGS = ESP_ALGS * ESP_DIRS * ESP_MODES,
};

/* The seed's parallel/serial ratios on 4 cores (kernel pcrypt). */
static const double esp_seed[ESP_ALGS] = { 2.4, 1.9 };

struct esp_side {
	struct pb_daemon *d;
	struct pb_flow enc, dec;
	bool enc_open, dec_open;
};

struct esp_cfg {
	unsigned alg, dirs, mode; /* indices */
	double mbps[PB_MAX_ROUNDS], enc[PB_MAX_ROUNDS], dec[PB_MAX_ROUNDS];
	double med, med_enc, med_dec;
};

static double mbps(const struct pb_flow *f)
{
	return pb_flow_ops_per_s(f) * ESP_PACKET * 8 / 1e6;
}

static int esp_open(const struct pb_cfg *cfg, struct pb_daemons *ds,
		    struct esp_side *s, const struct pb_alg *a,
		    unsigned workers)
{
	struct pb_flow_params p = {
		.alg = a,
		.len = ESP_CIPHER_LEN,
		.slots = cfg->slots,
		.burst = PB_BURST,
	};
	int err = pb_daemon_get(ds, workers, false, &s->d);

	if (err)
		return err;
	p.dir = CC_ENCRYPT;
	snprintf(p.name, sizeof(p.name), "poolbench-esp-%s-w%u-enc", a->name,
		 workers);
	err = pb_flow_open(&s->enc, s->d->sp.sock, &p);
	if (err)
		return err;
	s->enc_open = true;
	p.dir = CC_DECRYPT;
	snprintf(p.name, sizeof(p.name), "poolbench-esp-%s-w%u-dec", a->name,
		 workers);
	err = pb_flow_open(&s->dec, s->d->sp.sock, &p);
	if (err)
		return err;
	s->dec_open = true;
	/* Both check the daemon against OpenSSL; the decrypt side keeps the
	 * verified ciphertexts to replay. */
	return pb_flow_verify(&s->enc) || pb_flow_verify(&s->dec) ? -1 : 0;
}

/* Serial and parallel side by side, one row per algorithm and number of
 * directions; with two, the split between encrypt and decrypt too. */
static void esp_report(const struct pb_cfg *cfg, const struct esp_cfg *c,
		       const struct pb_alg *const *algs, unsigned par)
{
	static char par_head[48];
	struct bench_sheet t;

	snprintf(par_head, sizeof(par_head), "Parallel (%u) Mbit/s", par);
	bench_sheet_init(&t, "pcrypt", NULL);
	bench_sheet_col(&t, "alg", "Algorithm", SHEET_BOTH | SHEET_LEFT);
	bench_sheet_col(&t, "dirs", "Dirs", SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "serial_mbps", "Serial (1) Mbit/s",
			SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "serial_enc_mbps", NULL, SHEET_DATA | SHEET_NUM);
	bench_sheet_col(&t, "serial_dec_mbps", NULL, SHEET_DATA | SHEET_NUM);
	bench_sheet_col(&t, "serial_split", "enc + dec",
			SHEET_TEXT | SHEET_WIDE);
	bench_sheet_col(&t, "parallel_workers", NULL, SHEET_DATA | SHEET_NUM);
	bench_sheet_col(&t, "parallel_mbps", par_head, SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "parallel_enc_mbps", NULL, SHEET_DATA | SHEET_NUM);
	bench_sheet_col(&t, "parallel_dec_mbps", NULL, SHEET_DATA | SHEET_NUM);
	bench_sheet_col(&t, "parallel_split", "enc + dec",
			SHEET_TEXT | SHEET_WIDE);
	bench_sheet_col(&t, "ratio_par_serial", "Parallel/serial",
			SHEET_BOTH | SHEET_NUM);
	bench_sheet_col(&t, "seed_ratio", "Seed, 4 cores",
			SHEET_BOTH | SHEET_NUM | SHEET_WIDE);
	for (unsigned a = 0; a < ESP_ALGS; a++) {
		for (unsigned d = 0; d < ESP_DIRS; d++) {
			const struct esp_cfg *ser = &c[(a * ESP_DIRS + d) * 2];
			const struct esp_cfg *pa = ser + 1;
			double ratio[PB_MAX_ROUNDS];
			unsigned col = 0;

			for (unsigned r = 0; r < cfg->rounds; r++)
				ratio[r] = ser->mbps[r] > 0
						   ? pa->mbps[r] / ser->mbps[r]
						   : 0;
			if (bench_sheet_row(&t))
				break;
			bench_sheet_set(&t, col++, "%s", algs[a]->name);
			bench_sheet_set(&t, col++, "%u", d + 1);
			bench_sheet_set(&t, col++, "%.0f", ser->med);
			bench_sheet_set(&t, col++, "%.0f", ser->med_enc);
			bench_sheet_set(&t, col++, "%.0f", ser->med_dec);
			if (d == 1)
				bench_sheet_set(&t, col, "%.0f + %.0f",
						ser->med_enc, ser->med_dec);
			col++;
			bench_sheet_set(&t, col++, "%u", par);
			bench_sheet_set(&t, col++, "%.0f", pa->med);
			bench_sheet_set(&t, col++, "%.0f", pa->med_enc);
			bench_sheet_set(&t, col++, "%.0f", pa->med_dec);
			if (d == 1)
				bench_sheet_set(&t, col, "%.0f + %.0f",
						pa->med_enc, pa->med_dec);
			col++;
			bench_sheet_set(&t, col++, "%.2f",
					bench_median(ratio, cfg->rounds));
			bench_sheet_set(&t, col++, "%.1f", esp_seed[a]);
		}
	}
	bench_sink_emit(&cfg->sink, &t);
	bench_sheet_fini(&t);
}

int pb_esp_run(const struct pb_cfg *cfg, struct pb_daemons *ds)
{
	const struct pb_alg *const algs[ESP_ALGS] = { &pb_esp_sha1,
						      &pb_esp_null };
	const unsigned par = cfg->ncpu > 2 ? cfg->ncpu : 2;
	const unsigned workers[ESP_MODES] = { 1, par };
	struct esp_side side[ESP_ALGS][ESP_MODES];
	struct esp_cfg c[ESP_CONFIGS];
	uint64_t checked = 0;
	struct bench_env env;
	int rc = 0;

	memset(side, 0, sizeof(side));
	memset(c, 0, sizeof(c));
	pb_note(cfg,
		"\n== pcrypt experiment: %u-byte packets ==\n"
		"   ESP: %u B of CBC ciphertext, 8 B header as AAD, in place;\n"
		"   one queue per direction, %u packets in flight, bursts of "
		"%u; 2 directions: a second queue\n"
		"   on its own thread decrypts (and verifies) what it "
		"encrypted before the run.\n"
		"   Serial = --workers 1, parallel = --workers %u; alternated "
		"each round; median of %u rounds x %u ms\n",
		ESP_PACKET, ESP_CIPHER_LEN, cfg->slots, PB_BURST, par,
		cfg->rounds, cfg->time_ms);
	for (unsigned a = 0; a < ESP_ALGS; a++)
		for (unsigned m = 0; m < ESP_MODES; m++)
			if (esp_open(cfg, ds, &side[a][m], algs[a],
				     workers[m])) {
				bench_err("pcrypt: set-up failed\n");
				rc = -1;
				goto out;
			}
	for (unsigned i = 0; i < ESP_CONFIGS; i++) {
		c[i].mode = i % ESP_MODES;
		c[i].dirs = i / ESP_MODES % ESP_DIRS + 1;
		c[i].alg = i / (ESP_MODES * ESP_DIRS);
	}

	pb_env_mark(&env, ds);
	for (unsigned r = 0; r < cfg->rounds; r++) {
		for (unsigned k = 0; k < ESP_CONFIGS; k++) {
			struct esp_cfg *e = &c[(k + r) % ESP_CONFIGS];
			struct esp_side *s = &side[e->alg][e->mode];
			struct pb_flow *fl[2] = { &s->enc, &s->dec };

			if (pb_flow_measure(fl, e->dirs, cfg->warm_ms,
					    cfg->time_ms,
					    cfg->verbose ? s->d : NULL))
				rc = -1;
			e->enc[r] = mbps(&s->enc);
			e->dec[r] = e->dirs > 1 ? mbps(&s->dec) : 0;
			e->mbps[r] = e->enc[r] + e->dec[r];
			if (cfg->verbose) {
				char client[32];

				if (e->dirs > 1)
					snprintf(client, sizeof(client),
						 "CPUs %d+%d", s->enc.cpu,
						 s->dec.cpu);
				else
					snprintf(client, sizeof(client),
						 "CPU %d", s->enc.cpu);
				pb_note(cfg,
					"   round %u %s %u dir w%u: %.0f Mbit/s; "
					"client on %s, workers %s\n",
					r + 1, algs[e->alg]->name, e->dirs,
					workers[e->mode], e->mbps[r], client,
					s->enc.worker_cpus);
			}
		}
	}
	for (unsigned i = 0; i < ESP_CONFIGS; i++) {
		c[i].med = bench_median(c[i].mbps, cfg->rounds);
		c[i].med_enc = bench_median(c[i].enc, cfg->rounds);
		c[i].med_dec = bench_median(c[i].dec, cfg->rounds);
	}
	esp_report(cfg, c, algs, par);
	pb_env_end(&env, cfg, ds, "this section");

out:
	for (unsigned a = 0; a < ESP_ALGS; a++)
		for (unsigned m = 0; m < ESP_MODES; m++) {
			struct esp_side *s = &side[a][m];

			if (s->enc_open) {
				checked += s->enc.next_done;
				if (pb_flow_errors(&s->enc))
					rc = -1;
				pb_flow_close(&s->enc);
			}
			if (s->dec_open) {
				checked += s->dec.next_done;
				if (pb_flow_errors(&s->dec))
					rc = -1;
				pb_flow_close(&s->dec);
			}
		}
	pb_note(cfg, "Checked: %llu completions, %s\n",
		(unsigned long long)checked,
		rc ? "SOME WRONG (see above)"
		   : "all in submission order, status OK, decrypts back to "
		     "the plaintext");
	return rc;
}
