/* Live inspection, shared by its files: the response writer (inspect_out.c), the request
 * handlers (inspect_cmds.c), the bundle views (inspect_bundle.c) and the server
 * (inspect_server.c); the reload history is the policy's (policy/reload_history.c).
 *
 * Wire protocol (one unix stream connection, any number of requests): on connecting, the
 * client first reads the server's greeting `hello ncclbpf-inspect 1` (or `error refused ...`
 * when its uid may not inspect this process, then the server closes). Then it sends one
 * line; the server answers with record lines `WORD key=value ...` and ends the answer with a
 * line `ok` or `error MESSAGE`. Values are percent-escaped (space, '%', '=', control and
 * non-ASCII bytes as %XX), so a record always splits on spaces and a key on its first '='.
 * Requests: info | stat | maps | map dump NAME | map update NAME KEYHEX VALUEHEX | env |
 * telemetry | quit. */
#ifndef NCCLBPF_RT_INSPECT_H
#define NCCLBPF_RT_INSPECT_H

#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/* --- Response writer ------------------------------------------------------------------- */
struct insp_out {
	int fd;
	int err; /* a write failed: the rest is dropped */
	size_t len;
	char buf[16384];
};
void insp_begin(struct insp_out *o, const char *word);		      /* starts a record line */
void insp_kv(struct insp_out *o, const char *key, const char *value); /* escaped value */
void insp_kvu(struct insp_out *o, const char *key, uint64_t value);
void insp_kvi(struct insp_out *o, const char *key, int64_t value);
void insp_kvhex(struct insp_out *o, const char *key, const void *data, size_t len);
void insp_end(struct insp_out *o); /* ends the record line */
void insp_ok(struct insp_out *o);
void insp_error(struct insp_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void insp_flush(struct insp_out *o);

/* --- Process identity (inspect_server.c) ------------------------------------------------ */
struct insp_ident {
	struct rt_ident id;
	char dir[4096];
	int cp; /* NCCLBPF_CP_DIR was set: the process takes part in the control plane */
};
extern struct insp_ident insp_ident;

/* --- Handlers (inspect_cmds.c) ---------------------------------------------------------- */
/* Answers one request line (without its newline). Returns 1 when the client asked to quit. */
int insp_handle(struct insp_out *o, char *line);

/* --- Built-in telemetry (inspect_telem.c) ------------------------------------------------ */
void insp_telemetry(struct insp_out *o);

/* --- The active policy's bundle (inspect_bundle.c; callers hold rt.reload_lock) ---------- */
void insp_bundle_progs(struct insp_out *o, const struct rt_policy *p);
void insp_bundle_maps(struct insp_out *o, const struct rt_policy *p);
int insp_bundle_map_dump(struct insp_out *o, const struct rt_policy *p, const char *name);
/* 1 when p has a map NAME that only tuner-side programs write (it may feed decisions). */
int insp_bundle_map_is_uniform(const struct rt_policy *p, const char *name);
/* 0, or -errno with why in msg (uniform map: refused, use the control plane). */
int insp_bundle_map_update(const struct rt_policy *p, const char *name, const char *key_hex,
			   const char *value_hex, char *msg, size_t msg_len);

/* inspect_server.c: the live-inspection server, started at the first acquire and stopped at
 * the last release (start/start.c). */
void rt_inspect_start(void);
void rt_inspect_stop(void);

#endif
