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

/* When process pid started: the kernel's start time of it (clock ticks since boot,
 * /proc/<pid>/stat field 22); 0 when unknown (no /proc, no such process). A pid alone names a
 * process only until the kernel hands the number to another one; the pid with this names one
 * process for the life of the host, so a record left by a dead process is told from one of the
 * live process that now has its pid. */
unsigned long long ncclbpf_rt_proc_start(int pid);

/* 1 when the process a record of this host names (its pid, and its ncclbpf_rt_proc_start when
 * it registered; 0: not recorded, the pid alone decides) is gone: no process has the pid, or
 * the one that has it now started at another time. The rule for every record a process leaves
 * (inspection records, control-plane member records). */
int ncclbpf_rt_proc_gone(int pid, unsigned long long proc_start);

/* The directory processes register in when NCCLBPF_CP_DIR is unset, this user's own:
 * /dev/shm/ncclbpf-<euid> (`ncclbpf run` makes its jobs' control-plane directories below it).
 * Returns buf. */
const char *ncclbpf_rt_user_dir(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
