/* Every environment variable the plugin, the CLI and the tools read: one table (envvars.c)
 * with each variable's type, accepted values, default and one line of documentation, and the
 * readers that go with it. A value that is not accepted is ignored with one WARN per variable
 * and process, naming the variable and what it accepts; the default applies. docs/deploying.md
 * ("Environment") is generated from the table (`ncclbpf env --markdown`) and a test fails when
 * the two differ. libc only; no reader allocates or blocks. */
#ifndef NCCLBPF_ENVVARS_H
#define NCCLBPF_ENVVARS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ncclbpf_env_type {
	NCCLBPF_ENV_PATH,  /* a file or directory (checked where it is used), at most max bytes */
	NCCLBPF_ENV_TEXT,  /* free text, at most max bytes */
	NCCLBPF_ENV_BOOL,  /* 0 or 1 */
	NCCLBPF_ENV_UINT,  /* a decimal integer in min..max */
	NCCLBPF_ENV_ENUM,  /* one of values ("a|b|c"): the reader gets its index */
	NCCLBPF_ENV_HEX64, /* 1 to 16 hex digits */
	NCCLBPF_ENV_BYTES, /* a size in min..max: decimal bytes, or with a K, M, G or T suffix
			    * (powers of 1024); read with ncclbpf_env_uint */
};

/* Who reads it, which is also how docs/deploying.md groups the table. */
enum ncclbpf_env_area {
	NCCLBPF_ENV_PLUGIN,    /* the plugin, at the first communicator */
	NCCLBPF_ENV_INSPECT,   /* live inspection (ncclbpf ps, stat, map) */
	NCCLBPF_ENV_CP,	       /* the control plane */
	NCCLBPF_ENV_NET,       /* the net plugin, at its first use */
	NCCLBPF_ENV_TELEMETRY, /* the built-in telemetry and its exports */
	NCCLBPF_ENV_TOOLS,     /* the ncclbpf CLI and ncclbpf-gpubench */
	NCCLBPF_ENV_ELSEWHERE, /* set by NCCL's users or by launchers; read, never required */
	NCCLBPF_ENV_AREAS
};

/* What the plugin does with a PATH setting when it starts, which `ncclbpf env` checks the same
 * way (ncclbpf/trusted_path.h) before a job does. */
enum ncclbpf_env_use {
	NCCLBPF_ENV_USE_NONE,	 /* not checked beyond its length */
	NCCLBPF_ENV_USE_BUNDLE,	 /* a policy bundle: read, verified and loaded ("native:NAME": none)
				  */
	NCCLBPF_ENV_USE_LIBRARY, /* a library to dlopen (ncclbpf_path_open_library) */
	NCCLBPF_ENV_USE_DIR,	 /* a directory, created when missing (ncclbpf_path_open_dir) */
	NCCLBPF_ENV_USE_APPEND,	 /* a file appended to, created when missing (open_append) */
	NCCLBPF_ENV_USE_TEMPLATE, /* the same, named by a template (ncclbpf_trace_path) */
	NCCLBPF_ENV_USE_EXPORT,	  /* a telemetry export directory we write into (telemetry.h) */
};

struct ncclbpf_env_var {
	const char *name;
	enum ncclbpf_env_type type;
	enum ncclbpf_env_area area;
	uint64_t min, max;  /* UINT: range; PATH, TEXT: max bytes */
	const char *values; /* ENUM: the accepted values, '|'-separated */
	int64_t dflt;	    /* what the readers return when unset or refused (ENUM: index) */
	const char *shown;  /* the default as the documentation says it */
	const char *doc;    /* one line */
};

/* How the plugin uses path setting v (NCCLBPF_ENV_USE_NONE for any other). */
enum ncclbpf_env_use ncclbpf_env_use(const struct ncclbpf_env_var *v);

/* The table, in documentation order. */
const struct ncclbpf_env_var *ncclbpf_env_table(size_t *n);
const struct ncclbpf_env_var *ncclbpf_env_find(const char *name);

/* The value of name, NULL when unset or empty (or refused: too long). */
const char *ncclbpf_env_str(const char *name);
/* Readers of typed variables: the value when it is accepted, else (unset, or refused with its
 * WARN) the table's default. */
int ncclbpf_env_bool(const char *name);
uint64_t ncclbpf_env_uint(const char *name);
int ncclbpf_env_enum(const char *name);
/* 1 and *v when set and accepted, else 0. */
int ncclbpf_env_hex64(const char *name, uint64_t *v);

/* Checks value against v's rule: 0, or -1 with the sentence the WARN prints in msg
 * ("NCCLBPF_WATCH=yes ignored (accepted: 0 or 1); using 1"). */
int ncclbpf_env_check(const struct ncclbpf_env_var *v, const char *value, char *msg,
		      size_t msg_len);
/* Checks every variable of the table that is set (WARN for each refused one, once per
 * process). The runtime calls it at the first acquire, so a mistyped setting is reported even
 * where nothing reads it in this run. Returns the number refused. */
unsigned ncclbpf_env_check_all(void);

/* The environment itself, for the env plugin serving NCCL's own variables unchanged (no rule:
 * they are NCCL's to interpret), and for a command that sets one of ours aside and restores it
 * as it was (tools/ncclbpf/bundle_check.c). */
const char *ncclbpf_env_raw(const char *name);

#ifdef __cplusplus
}
#endif
#endif
