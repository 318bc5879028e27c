/* In-job A/B for ncclbpf-gpubench --ab: each rank switches its own plugin between two policy
 * bundles while the job runs, through the plugin's hot reload (a new bundle renamed over the
 * file NCCLBPF_POLICY names), and waits until its own process reports the new version as
 * active (live inspection, `info`). Adjacent blocks of the same job then differ only in the
 * policy: far less noise than comparing separate jobs. No CUDA or NCCL here (testable on CPU). */
#ifndef NCCLBPF_GPUBENCH_AB_SWAP_H
#define NCCLBPF_GPUBENCH_AB_SWAP_H

#include <stddef.h>
#include <stdint.h>

#include "inspect_client.h"

struct gb_swap {
	char live[4096];       /* the file NCCLBPF_POLICY names */
	int connected;	       /* conn is open */
	struct insp_conn conn; /* to this process's own inspection server */
	uint64_t version;      /* the policy version active after the last swap */
};

/* live: the path NCCLBPF_POLICY names (set it to this before the plugin starts). */
void gb_swap_init(struct gb_swap *s, const char *live);
/* Installs bundle at s->live (copy beside it, then rename over it) and waits up to timeout_ms
 * until this process runs a newer version loaded from s->live. 0, or -1 with err: the copy
 * failed, the plugin rejected the bundle (its reason is in NCCL's log), or it never answered
 * (inspection off: NCCLBPF_INSPECT=0; no watcher: NCCLBPF_WATCH=0, or NCCLBPF_CP_DIR set:
 * the control plane owns reloads then). */
int gb_swap_to(struct gb_swap *s, const char *bundle, int timeout_ms, char *err, size_t err_len);
void gb_swap_close(struct gb_swap *s);

#endif
