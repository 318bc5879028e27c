/* A minimal NCCL stand-in for the tools: loads a tuner plugin exactly as NCCL does (dlopen with
 * RTLD_NOW | RTLD_LOCAL, versioned symbol lookup) and collects what it logs. Used by replay and
 * bench, which must exercise the real library, not our sources linked in. */
#ifndef NCCLBPF_PLUGIN_HOST_H
#define NCCLBPF_PLUGIN_HOST_H

#include <stddef.h>

#include "nccl_tuner.h"

struct plugin_host {
	void *handle;
	const ncclTuner_v5_t *v5;
	const ncclTuner_v6_t *v6;
	char path[4096];
};

/* The default plugin: $NCCLBPF_PLUGIN, else the library installed with this tool (../lib from
 * the executable's folder, self_path.h). */
const char *plugin_host_default_path(void);
/* dlopens path as NCCL does and returns its table sym (NULL with a message on stderr; *handle is
 * then NULL too). */
void *plugin_host_load(const char *path, const char *sym, void **handle);
/* A tuner plugin (ncclTunerPlugin_v5 required). Returns 0 or -1 with a message on stderr. */
int plugin_host_open(struct plugin_host *h, const char *path);
void plugin_host_close(struct plugin_host *h);

/* NCCL's logger signature; lines are kept (last 64) and WARN lines echoed to stderr. */
void plugin_host_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
			const char *fmt, ...);
/* Number of lines logged so far; the text of line i (0-based, the last 64 are kept). */
unsigned plugin_host_log_count(void);
const char *plugin_host_log_line(unsigned i);
extern int plugin_host_echo_info; /* echo INFO lines to stderr too */
extern int plugin_host_quiet;	  /* do not echo WARN lines either */

const char *plugin_host_algo_name(int a);
const char *plugin_host_proto_name(int p);
const char *plugin_host_coll_name(int c);
/* Formats a byte count as "8 B", "64 KiB", "1.5 MiB". */
const char *plugin_host_bytes(unsigned long long b, char *buf, size_t len);

#endif
