/* The runtime's words that every NCCL call reads, together in one cache line
 * (runtime/src/base/rt_base.c), so that a call touches one line of the library's globals: the
 * active policy, its tuner keeping flags and the trace descriptor. Hidden, so that reading one
 * is one load (not a load of its address first); the tuner's assembly entry
 * (adapters/nccl/src/tuner_call.c) reads them at the offsets asserted there. */
#ifndef NCCLBPF_RT_HOT_H
#define NCCLBPF_RT_HOT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rt_policy; /* private to the runtime */

struct ncclbpf_rt_hot {
	/* The process-wide active policy: named here only so that the inline entries of
	 * runtime.h can load it; accessed with __atomic builtins only. The line is the struct's
	 * alone (aligned, and as large as a line): the slow paths' data, written by reloads and
	 * inspection, must not bounce it. */
	struct rt_policy *active __attribute__((aligned(64)));
	/* The active policy's tuner_keeps (enum ncclbpf_rt_tuner_keeps in runtime.h; 0: its
	 * tuner program cannot run through ncclbpf_rt_tuner_begin_kept), set with each
	 * activation. A hint for choosing a path: that function hands the policy's own flags
	 * back. */
	uint32_t tuner_keeps;
	/* NCCLBPF_TRACE's descriptor, -1 while not recording (trace.h). */
	int trace_fd;
};
extern struct ncclbpf_rt_hot ncclbpf_rt_hot_ __attribute__((visibility("hidden")));

#ifdef __cplusplus
}
#endif
#endif
