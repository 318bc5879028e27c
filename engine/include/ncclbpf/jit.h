/* JIT compilation to native code (x86-64 today; one backend file per architecture).
 * Owner: engine/src/jit/. The interpreter stays the fallback where no backend exists. */
#ifndef NCCLBPF_JIT_H
#define NCCLBPF_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "prog.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ebpf_jit_stats {
	uint64_t compile_ns; /* wall time of ebpf_prog__jit */
	uint32_t code_size;  /* bytes of machine code */
};

/* 1 when this build has a JIT backend for the host architecture. */
int ebpf_jit_available(void);

/* Compiles the program; afterwards ebpf_prog__jit_fn returns the native entry point. Code
 * pages are never writable and executable at once. Returns 0 or -errno with err filled. */
int ebpf_prog__jit(struct ebpf_prog *prog, struct ebpf_jit_stats *stats, char *err,
		   size_t err_len);
/* The compiled function (call it as fn(r1, r2)), or NULL when not compiled. */
ebpf_jit_fn ebpf_prog__jit_fn(const struct ebpf_prog *prog);

/* Runs with the chosen engine (EBPF_ENGINE_DEFAULT: the JIT when compiled, else interpreter). */
int ebpf_prog__run(const struct ebpf_prog *prog, enum ebpf_engine engine, uint64_t r1,
		   uint64_t r2, const struct ebpf_run_opts *opts, uint64_t *r0);

#ifdef __cplusplus
}
#endif
#endif
