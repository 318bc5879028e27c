/* The host side of generated programs that use maps (gen.h's map families): engine maps made
 * from a program's map table, and their reset between runs. The kernel oracle makes its own
 * (kernel_oracle__set_maps). */
#ifndef NCCLBPF_TEST_GEN_ENV_H
#define NCCLBPF_TEST_GEN_ENV_H

#include "gen.h"
#include "ebpf/maps.h"

struct gen_env {
	uint32_t n_maps;
	struct gen_map defs[GEN_MAX_MAPS];
	struct ebpf_map *maps[GEN_MAX_MAPS]; /* ebpf_verify_opts.maps / ebpf_exec_opts.maps */
};

/* Makes env hold maps matching p's table (kept when env already holds the same table, so a run
 * over many programs creates them once). 0, or -errno with err filled. */
int gen_env_prepare(struct gen_env *env, const struct gen_prog *p, char *err, size_t err_len);
/* Back to the initial state: arrays zeroed, hashes empty, ring buffers drained. */
void gen_env_reset(struct gen_env *env);
void gen_env_free(struct gen_env *env);

#endif
