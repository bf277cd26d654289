/*
 * emit_seccomp_oci.c - the seccomp filter as an OCI runtime-spec profile
 * (seccomp.h: seccomp_oci_entries(), --emit=seccomp-oci).
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "seccomp.h"

/* The OCI spelling of each ABI of seccomp_arch_table, in its order. */
static const char *
oci_arch(uint32_t token)
{
	switch (token) {
	case SCMP_ARCH_X86_64:
		return "SCMP_ARCH_X86_64";
	case SCMP_ARCH_X86:
		return "SCMP_ARCH_X86";
	case SCMP_ARCH_X32:
		return "SCMP_ARCH_X32";
	case SCMP_ARCH_AARCH64:
		return "SCMP_ARCH_AARCH64";
	default:
		return "SCMP_ARCH_ARM";
	}
}

static const char *
oci_op(enum scmp_compare op)
{
	switch (op) {
	case SCMP_CMP_NE:
		return "SCMP_CMP_NE";
	case SCMP_CMP_GT:
		return "SCMP_CMP_GT";
	case SCMP_CMP_MASKED_EQ:
		return "SCMP_CMP_MASKED_EQ";
	default:
		return "SCMP_CMP_EQ";
	}
}

/* The rules of VARIANT, as the filter has them (rules_add() in emit_seccomp.c). */
static void
each_rule(enum seccomp_variant variant, void (*fn)(void *, const struct seccomp_rule *), void *arg)
{
	for (size_t i = 0; i < seccomp_rule_table_len; i++)
		if (!seccomp_variant_replaces(variant, seccomp_rule_table[i].name))
			fn(arg, &seccomp_rule_table[i]);
	for (size_t i = 0; variant != SECCOMP_BASE && i < seccomp_landlock_rule_table_len; i++)
		if (!(seccomp_landlock_rule_table[i].closed && variant == SECCOMP_LANDLOCK_NET))
			fn(arg, &seccomp_landlock_rule_table[i]);
}

struct collect {
	struct seccomp_oci_entry *v;
	size_t n, cap;
	bool conditional; /* this pass takes the rules with comparisons */
};

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static struct seccomp_oci_entry *
push(struct collect *c)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 32;
		c->v = realloc(c->v, c->cap * sizeof(*c->v));
		if (!c->v)
			abort();
	}
	memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
	return &c->v[c->n++];
}

static void
collect_rule(void *arg, const struct seccomp_rule *r)
{
	struct collect *c = arg;
	struct seccomp_oci_entry *e = NULL;

	if ((r->ncmp != 0) != c->conditional)
		return;
	/* Unconditional refusals: one entry per errno, every name in it. */
	for (size_t i = 0; !c->conditional && i < c->n && !e; i++)
		if (c->v[i].err == r->err)
			e = &c->v[i];
	if (!e) {
		e = push(c);
		e->err = r->err;
		e->ncmp = r->ncmp;
		memcpy(e->cmp, r->cmp, sizeof(e->cmp));
	}
	e->names = realloc(e->names, (e->n_names + 1) * sizeof(*e->names));
	if (!e->names)
		abort();
	e->names[e->n_names++] = r->name;
}

size_t
seccomp_oci_entries(enum seccomp_variant variant, struct seccomp_oci_entry **out)
{
	struct collect c = {0};

	each_rule(variant, collect_rule, &c);
	for (size_t i = 0; i < c.n; i++)
		qsort(c.v[i].names, c.v[i].n_names, sizeof(*c.v[i].names), cmp_name);
	c.conditional = true;
	each_rule(variant, collect_rule, &c);
	*out = c.v;
	return c.n;
}

void
seccomp_oci_free(struct seccomp_oci_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].names);
	free(v);
}

void
seccomp_oci_write(struct json *j, enum seccomp_variant variant)
{
	struct seccomp_oci_entry *v;
	size_t n = seccomp_oci_entries(variant, &v);

	json_open(j, '{', false);
	json_key(j, "defaultAction");
	json_str(j, "SCMP_ACT_ALLOW");
	json_key(j, "architectures");
	json_open(j, '[', true);
	for (size_t i = 0; i < seccomp_arch_table_len; i++)
		json_str(j, oci_arch(seccomp_arch_table[i].token));
	json_close(j);
	json_key(j, "syscalls");
	json_open(j, '[', false);
	for (size_t i = 0; i < n; i++) {
		json_open(j, '{', true);
		json_key(j, "names");
		json_open(j, '[', true);
		for (size_t k = 0; k < v[i].n_names; k++)
			json_str(j, v[i].names[k]);
		json_close(j);
		json_key(j, "action");
		json_str(j, "SCMP_ACT_ERRNO");
		json_key(j, "errnoRet");
		json_u64(j, (uint64_t)v[i].err);
		if (v[i].ncmp) {
			json_key(j, "args");
			json_open(j, '[', true);
			for (unsigned k = 0; k < v[i].ncmp; k++) {
				const struct seccomp_cmp *c = &v[i].cmp[k];
				bool masked = c->op == SCMP_CMP_MASKED_EQ;

				json_open(j, '{', true);
				json_key(j, "index");
				json_u64(j, c->arg);
				/* libseccomp's MASKED_EQ: value is the mask, valueTwo the datum. */
				json_key(j, "value");
				json_u64(j, masked ? c->mask : c->value);
				json_key(j, "valueTwo");
				json_u64(j, masked ? c->value : 0);
				json_key(j, "op");
				json_str(j, oci_op(c->op));
				json_close(j);
			}
			json_close(j);
		}
		json_close(j);
	}
	json_close(j);
	json_close(j);
	seccomp_oci_free(v, n);
}

void
seccomp_oci_json(enum seccomp_variant variant, struct textbuf *out)
{
	struct json j;

	json_init(&j, out);
	seccomp_oci_write(&j, variant);
	json_end(&j);
}

int
emit_seccomp_oci(const struct policy *p, enum target t, struct diag *d, struct textbuf *out)
{
	const void *data;
	size_t len;

	(void)p;
	(void)t;
	(void)d;
	if (seccomp_output_carried(SECCOMP_OUT_OCI, &data, &len))
		tb_write(out, data, len);
	else
		seccomp_oci_json(SECCOMP_BASE, out);
	return 0;
}
