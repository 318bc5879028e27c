/* NCCL settings a policy bundle may carry, and their validation.
 *
 * Text form, one setting per line: `NAME=VALUE`, or `!NAME=VALUE` to enforce it (the bundle's
 * value then wins over the process environment; otherwise the environment wins). Blank lines
 * and lines starting with '#' are ignored. Every NAME must be a parameter in the known table
 * (env_settings.c: type, allowed values or range); an unknown name or a bad value is reported
 * with its line number and not applied, while the other lines still are. */
#ifndef NCCLBPF_ENV_SETTINGS_H
#define NCCLBPF_ENV_SETTINGS_H

#include <stddef.h>

#define ENV_SETTINGS_MAX     32
#define ENV_SETTING_NAME_LEN 48
#define ENV_SETTING_VAL_LEN  128

struct env_setting {
	char name[ENV_SETTING_NAME_LEN];
	char value[ENV_SETTING_VAL_LEN];
	int enforced;
	unsigned line;
};

struct env_settings {
	struct env_setting s[ENV_SETTINGS_MAX];
	unsigned n;
	unsigned n_rejected;
	char first_error[160]; /* "line N: ..." for the first rejected line, "" when none */
};

/* Parses text[0..len) into out (cleared first). Returns the number of rejected lines. */
unsigned env_settings_parse(const char *text, size_t len, struct env_settings *out);

/* Checks one NAME=VALUE against the known table: 0, or -1 with a reason in err. */
int env_setting_validate(const char *name, const char *value, char *err, size_t err_len);

/* The setting for name, or NULL. */
const struct env_setting *env_settings_find(const struct env_settings *set, const char *name);

/* Provenance of what the env plugin served (defined in env.c; `ncclbpf stat` lists it).
 * fn is called once per distinct (name, value, source) that getEnv has returned so far, most
 * recently first served first; a name whose value changed appears once per value. source is
 * one of "process environment" (the environment's value, unchanged), "bundle <path>",
 * "bundle <path> (enforced)" (a setting of the bundle NCCLBPF_POLICY named; enforced ones win
 * over the environment) or "ncclbpf default" (an unset NCCL_TUNER_PLUGIN or
 * NCCL_PROFILER_PLUGIN resolved to this library). Values NCCL asked for but that were unset
 * everywhere are not listed. Safe from any thread, concurrently with getEnv: it walks the
 * append-only list getEnv interns into, without a lock and without allocating; every string
 * stays valid for the life of the process. */
typedef void (*env_served_fn)(const char *name, const char *value, const char *source, void *arg);
void env_served_foreach(env_served_fn fn, void *arg);

#endif
