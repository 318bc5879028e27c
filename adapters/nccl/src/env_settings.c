/* Validation of bundle-supplied NCCL settings against the parameters we know (names, types and
 * ranges from NCCL's documented environment variables). Anything not in the table is refused:
 * a typo must not silently become a no-op, and the plugin selectors (NCCL_ENV_PLUGIN is never
 * read through an env plugin at all) are not the bundle's to change, with one exception: a
 * bundle that needs our net plugin may say NCCL_NET_PLUGIN=ncclbpf, which the env plugin serves
 * as this library's path (env.c). Any other net plugin is the operator's choice, not the
 * bundle's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_settings.h"

enum kind { K_INT, K_ENUM, K_STR };

struct known_param {
	const char *name;
	enum kind kind;
	long min, max;		    /* K_INT */
	const char *const *choices; /* K_ENUM, NULL-terminated */
};

static const char *const debug_levels[] = {"VERSION", "WARN", "INFO", "ABORT", "TRACE", NULL};
static const char *const launch_modes[] = {"PARALLEL", "GROUP", NULL};
static const char *const nthreads[] = {"64", "128", "256", "512", NULL};
static const char *const net_self[] = {"ncclbpf", NULL};

static const struct known_param known[] = {
    {"NCCL_ALGO", K_STR, 0, 0, NULL},
    {"NCCL_PROTO", K_STR, 0, 0, NULL},
    {"NCCL_MIN_NCHANNELS", K_INT, 1, 64, NULL},
    {"NCCL_MAX_NCHANNELS", K_INT, 1, 64, NULL},
    {"NCCL_MIN_CTAS", K_INT, 1, 64, NULL},
    {"NCCL_MAX_CTAS", K_INT, 1, 64, NULL},
    {"NCCL_NTHREADS", K_ENUM, 0, 0, nthreads},
    {"NCCL_BUFFSIZE", K_INT, 1 << 12, 1L << 30, NULL},
    {"NCCL_P2P_DISABLE", K_INT, 0, 1, NULL},
    {"NCCL_SHM_DISABLE", K_INT, 0, 1, NULL},
    {"NCCL_IB_DISABLE", K_INT, 0, 1, NULL},
    {"NCCL_NVLS_ENABLE", K_INT, 0, 2, NULL},
    {"NCCL_CROSS_NIC", K_INT, 0, 2, NULL},
    {"NCCL_CUMEM_ENABLE", K_INT, 0, 1, NULL},
    {"NCCL_LAUNCH_MODE", K_ENUM, 0, 0, launch_modes},
    {"NCCL_DEBUG", K_ENUM, 0, 0, debug_levels},
    {"NCCL_DEBUG_SUBSYS", K_STR, 0, 0, NULL},
    {"NCCL_SOCKET_IFNAME", K_STR, 0, 0, NULL},
    {"NCCL_SOCKET_NTHREADS", K_INT, 1, 16, NULL},
    {"NCCL_NSOCKS_PERTHREAD", K_INT, 1, 64, NULL},
    {"NCCL_NET_PLUGIN", K_ENUM, 0, 0, net_self},
};

int env_setting_validate(const char *name, const char *value, char *err, size_t err_len)
{
	const struct known_param *p = NULL;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(known[i].name, name) == 0)
			p = &known[i];
	if (!p) {
		snprintf(err, err_len, "unknown NCCL parameter '%.48s'", name);
		return -1;
	}
	switch (p->kind) {
	case K_INT: {
		char *end;
		errno = 0;
		long v = strtol(value, &end, 10);
		if (!value[0] || *end || errno) {
			snprintf(err, err_len, "%s: '%.40s' is not an integer", name, value);
			return -1;
		}
		if (v < p->min || v > p->max) {
			snprintf(err, err_len, "%s: %ld outside [%ld, %ld]", name, v, p->min,
				 p->max);
			return -1;
		}
		return 0;
	}
	case K_ENUM:
		for (const char *const *c = p->choices; *c; c++)
			if (strcmp(*c, value) == 0)
				return 0;
		snprintf(err, err_len, "%s: '%.40s' is not an allowed value", name, value);
		return -1;
	case K_STR:
		if (!value[0]) {
			snprintf(err, err_len, "%s: empty value", name);
			return -1;
		}
		return 0;
	}
	return -1;
}

const struct env_setting *env_settings_find(const struct env_settings *set, const char *name)
{
	for (unsigned i = 0; i < set->n; i++)
		if (strcmp(set->s[i].name, name) == 0)
			return &set->s[i];
	return NULL;
}

static void reject(struct env_settings *out, unsigned line, const char *why)
{
	if (!out->n_rejected++)
		snprintf(out->first_error, sizeof(out->first_error), "line %u: %s", line, why);
}

static void parse_line(struct env_settings *out, unsigned line, const char *b, size_t n)
{
	while (n && (*b == ' ' || *b == '\t'))
		b++, n--;
	while (n && (b[n - 1] == ' ' || b[n - 1] == '\t' || b[n - 1] == '\r'))
		n--;
	if (!n || *b == '#')
		return;
	int enforced = *b == '!';
	if (enforced)
		b++, n--;
	const char *eq = memchr(b, '=', n);
	if (!eq) {
		reject(out, line, "expected NAME=VALUE");
		return;
	}
	size_t nl = (size_t)(eq - b), vl = n - nl - 1;
	char name[ENV_SETTING_NAME_LEN], value[ENV_SETTING_VAL_LEN], why[128];
	if (!nl || nl >= sizeof(name) || vl >= sizeof(value)) {
		reject(out, line, "name or value empty or too long");
		return;
	}
	memcpy(name, b, nl);
	name[nl] = 0;
	memcpy(value, eq + 1, vl);
	value[vl] = 0;
	if (env_setting_validate(name, value, why, sizeof(why))) {
		reject(out, line, why);
		return;
	}
	if (env_settings_find(out, name)) {
		snprintf(why, sizeof(why), "%s set twice", name);
		reject(out, line, why);
		return;
	}
	if (out->n >= ENV_SETTINGS_MAX) {
		reject(out, line, "too many settings");
		return;
	}
	struct env_setting *s = &out->s[out->n++];
	memcpy(s->name, name, nl + 1);
	memcpy(s->value, value, vl + 1);
	s->enforced = enforced;
	s->line = line;
}

unsigned env_settings_parse(const char *text, size_t len, struct env_settings *out)
{
	memset(out, 0, sizeof(*out));
	unsigned line = 1;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || text[i] == '\n' || text[i] == 0) {
			parse_line(out, line++, text + start, i - start);
			start = i + 1;
			if (i < len && text[i] == 0)
				break; /* a C string in the section ends the text */
		}
	}
	return out->n_rejected;
}
