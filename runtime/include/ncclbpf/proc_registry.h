/* Where a process running the plugin registers for live inspection, and the host name its
 * record carries: the rules the runtime registers by (inspect_server.c) and the CLI searches by
 * (`ncclbpf ps`, `stat`, `map`, `top`, `run`, `reload --job`), kept in one place so that the two
 * always agree. */
#ifndef NCCLBPF_PROC_REGISTRY_H
#define NCCLBPF_PROC_REGISTRY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This host's name as records and socket names carry it: gethostname ("localhost" when it has
 * none), every byte outside [A-Za-z0-9.-_:@] replaced by '_'. */
void ncclbpf_rt_host_name(char *buf, size_t len);

/* The directory processes register in when NCCLBPF_CP_DIR is unset, this user's own:
 * /dev/shm/ncclbpf-<euid> (`ncclbpf run` makes its jobs' control-plane directories below it).
 * Returns buf. */
const char *ncclbpf_rt_user_dir(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
