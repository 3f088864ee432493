/* SPDX-License-Identifier: MIT */
/* Named keys: the KeyRequest calls (docs/keys.md). No key byte of a
 * named key ever arrives here; what we send (an import's key, a wrapping
 * key) is wiped with the packed message by wire_send. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(CC_KEY_ENCRYPT == 1 && CC_KEY_DECRYPT == 2 &&
		       CC_KEY_MAC_GENERATE == 4 && CC_KEY_MAC_VERIFY == 8 &&
		       CC_KEY_SIGN == 16 && CC_KEY_VERIFY == 32 &&
		       CC_KEY_DERIVE == 64,
	       "the usage bits of cryptod.proto's KeyRequest");
_Static_assert(CC_KEY_PAIR_MAX == CTL_PKEY_MAX, "wire.h's bound");

static void info_copy(struct cc_key_info *d, const Cryptod__KeyInfo *s)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", s->name ? s->name : "");
	d->alg = (enum cc_alg)s->alg;
	d->key_len = s->key_len;
	d->usage = s->usage;
	d->exportable = s->exportable;
	d->nuids = s->n_uids < CC_KEY_IDS_MAX ? s->n_uids : CC_KEY_IDS_MAX;
	d->ngids = s->n_gids < CC_KEY_IDS_MAX ? s->n_gids : CC_KEY_IDS_MAX;
	d->nversions = s->n_versions < CC_KEY_VERSIONS_MAX
			       ? s->n_versions
			       : CC_KEY_VERSIONS_MAX;
	/* protobuf-c leaves an empty list NULL, which memcpy may not get
	 * even for no bytes. */
	if (d->nuids)
		memcpy(d->uids, s->uids, d->nuids * sizeof(uint32_t));
	if (d->ngids)
		memcpy(d->gids, s->gids, d->ngids * sizeof(uint32_t));
	if (d->nversions)
		memcpy(d->versions, s->versions,
		       d->nversions * sizeof(uint32_t));
	for (unsigned i = 0; i < d->nversions && i < s->n_created; i++)
		d->created[i] = s->created[i];
	d->ops = s->ops;
	d->bytes = s->bytes;
	d->last_use = s->last_use;
}

/* Send m, expect a KeyReply; *rep freed by the caller with wire_free. */
static int key_call(struct cc_conn *c, Cryptod__KeyRequest *m,
		    Cryptod__Envelope **rep)
{
	Cryptod__Envelope req = CRYPTOD__ENVELOPE__INIT;
	req.body_case = CRYPTOD__ENVELOPE__BODY_KEY_REQUEST;
	req.key_request = m;
	pthread_mutex_lock(&c->lock);
	int err = conn_call(c, &req, rep, NULL, NULL);
	pthread_mutex_unlock(&c->lock);
	if (err)
		return err;
	if ((*rep)->body_case != CRYPTOD__ENVELOPE__BODY_KEY_REPLY) {
		wire_free(*rep);
		return -EPROTO;
	}
	return 0;
}

/* A reply about one key: its facts to info, the version returned. */
static int key_one(struct cc_conn *c, Cryptod__KeyRequest *m,
		   struct cc_key_info *info)
{
	Cryptod__Envelope *rep;
	int err = key_call(c, m, &rep);
	if (err)
		return err;
	const Cryptod__KeyReply *r = rep->key_reply;
	if (r->n_keys != 1) {
		wire_free(rep);
		return -EPROTO;
	}
	if (info)
		info_copy(info, r->keys[0]);
	int ret = (int)(r->version & 0x7fffffff);
	wire_free(rep);
	return ret;
}

static int spec_fill(Cryptod__KeyRequest *m, const struct cc_key_spec *s)
{
	if (!s || !s->name || (s->nuids && !s->uids) || (s->ngids && !s->gids))
		return -EINVAL;
	m->name = (char *)s->name;
	m->alg = (Cryptod__Algorithm)s->alg;
	m->key_len = s->key_len;
	m->usage = s->usage;
	m->exportable = s->exportable != 0;
	m->n_uids = s->nuids;
	m->uids = (uint32_t *)s->uids;
	m->n_gids = s->ngids;
	m->gids = (uint32_t *)s->gids;
	return 0;
}

int cc_key_create(struct cc_conn *c, const struct cc_key_spec *s,
		  struct cc_key_info *info)
{
	Cryptod__KeyRequest m = CRYPTOD__KEY_REQUEST__INIT;
	int err = spec_fill(&m, s);
	if (err)
		return err;
	m.op = CRYPTOD__KEY_OP__KEY_CREATE;
	err = key_one(c, &m, info);
	return err < 0 ? err : 0;
}

int cc_key_import(struct cc_conn *c, const struct cc_key_spec *s,
		  const void *key, size_t key_len, struct cc_key_info *info)
{
	Cryptod__KeyRequest m = CRYPTOD__KEY_REQUEST__INIT;
	int err = spec_fill(&m, s);
	if (err || !key || key_len > CTL_KEY_MAX)
		return -EINVAL;
	m.op = CRYPTOD__KEY_OP__KEY_IMPORT;
	m.key_len = (uint32_t)key_len;
	m.key.data = (uint8_t *)key;
	m.key.len = key_len;
	err = key_one(c, &m, info);
	return err < 0 ? err : 0;
}

int cc_key_import_pair(struct cc_conn *c, const struct cc_key_spec *s,
		       const void *key, size_t key_len, const void *pass,
		       size_t pass_len, struct cc_key_info *info)
{
	Cryptod__KeyRequest m = CRYPTOD__KEY_REQUEST__INIT;
	int err = spec_fill(&m, s);
	if (err || !key || !key_len || key_len > CTL_PKEY_MAX ||
	    (pass_len && !pass) || pass_len > CTL_PKEY_MAX)
		return -EINVAL;
	m.op = CRYPTOD__KEY_OP__KEY_IMPORT;
	m.key_len = 0; /* the key says */
	m.key.data = (uint8_t *)key;
	m.key.len = key_len;
	m.passphrase.data = (uint8_t *)pass;
	m.passphrase.len = pass_len;
	err = key_one(c, &m, info);
	return err < 0 ? err : 0;
}

int cc_key_pub(struct cc_conn *c, const char *name, uint32_t version, void *out,
	       size_t out_cap)
{
	Cryptod__KeyRequest m = CRYPTOD__KEY_REQUEST__INIT;
	Cryptod__Envelope *rep;
	if (!name || !out)
		return -EINVAL;
	m.op = CRYPTOD__KEY_OP__KEY_PUB;
	m.name = (char *)name;
	m.version = version;
	int err = key_call(c, &m, &rep);
	if (err)
		return err;
	const ProtobufCBinaryData *p = &rep->key_reply->public_key;
	if (!p->len || p->len > out_cap)
		err = p->len ? -ENOSPC : -EPROTO;
	else {
		memcpy(out, p->data, p->len);
		err = (int)p->len;
	}
	wire_free(rep);
	return err;
}

int cc_key_unwrap(struct cc_conn *c, const struct cc_key_spec *s,
		  const void *wkek, size_t wkek_len, const void *wrapped,
		  size_t wrapped_len, struct cc_key_info *info)
{
	Cryptod__KeyRequest m = CRYPTOD__KEY_REQUEST__INIT;
	int err = spec_fill(&m, s);
	if (err || !wkek || !wrapped || wkek_len > 32 ||
	    wrapped_len > CTL_PKEY_MAX + 16)
		return -EINVAL;
	m.op = CRYPTOD__KEY_OP__KEY_UNWRAP;
	m.wrapping_key.data = (uint8_t *)wkek;
	m.wrapping_key.len = wkek_len;
	m.wrapped.data = (uint8_t *)wrapped;
	m.wrapped.len = wrapped_len;
	err = key_one(c, &m, info);
	return err < 0 ? err : 0;
}

int cc_key_rotate(struct cc_conn *c, const char *name, struct cc_key_info *info)
{
	Cryptod__KeyRequest m = CRYPTOD__KEY_REQUEST__INIT;
	if (!name)
		return -EINVAL;
	m.op = CRYPTOD__KEY_OP__KEY_ROTATE;
	m.name = (char *)name;
	return key_one(c, &m, info);
}

int cc_key_show(struct cc_conn *c, const char *name, struct cc_key_info *info)
{
	Cryptod__KeyRequest m = CRYPTOD__KEY_REQUEST__INIT;
	if (!name || !info)
		return -EINVAL;
	m.op = CRYPTOD__KEY_OP__KEY_SHOW;
	m.name = (char *)name;
	int err = key_one(c, &m, info);
	return err < 0 ? err : 0;
}

int cc_key_delete(struct cc_conn *c, const char *name)
{
	Cryptod__KeyRequest m = CRYPTOD__KEY_REQUEST__INIT;
	Cryptod__Envelope *rep;
	if (!name)
		return -EINVAL;
	m.op = CRYPTOD__KEY_OP__KEY_DELETE;
	m.name = (char *)name;
	int err = key_call(c, &m, &rep);
	if (!err)
		wire_free(rep);
	return err;
}

int cc_key_wrap(struct cc_conn *c, const char *name, uint32_t version,
		const void *wkek, size_t wkek_len, void *out, size_t out_cap)
{
	Cryptod__KeyRequest m = CRYPTOD__KEY_REQUEST__INIT;
	Cryptod__Envelope *rep;
	if (!name || !wkek || wkek_len > 32 || !out)
		return -EINVAL;
	m.op = CRYPTOD__KEY_OP__KEY_WRAP;
	m.name = (char *)name;
	m.version = version;
	m.wrapping_key.data = (uint8_t *)wkek;
	m.wrapping_key.len = wkek_len;
	int err = key_call(c, &m, &rep);
	if (err)
		return err;
	const ProtobufCBinaryData *w = &rep->key_reply->wrapped;
	if (!w->len || w->len > out_cap)
		err = w->len ? -ENOSPC : -EPROTO;
	else {
		memcpy(out, w->data, w->len);
		err = (int)w->len;
	}
	wire_free(rep);
	return err;
}

int cc_key_list(struct cc_conn *c, struct cc_key_info **out, unsigned *n)
{
	Cryptod__KeyRequest m = CRYPTOD__KEY_REQUEST__INIT;
	Cryptod__Envelope *rep;
	if (!out || !n)
		return -EINVAL;
	m.op = CRYPTOD__KEY_OP__KEY_LIST;
	int err = key_call(c, &m, &rep);
	if (err)
		return err;
	const Cryptod__KeyReply *r = rep->key_reply;
	*out = calloc(r->n_keys ? r->n_keys : 1, sizeof(**out));
	if (!*out) {
		wire_free(rep);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->n_keys; i++)
		info_copy(&(*out)[i], r->keys[i]);
	*n = (unsigned)r->n_keys;
	wire_free(rep);
	return 0;
}

void cc_key_list_free(struct cc_key_info *list)
{
	free(list);
}
