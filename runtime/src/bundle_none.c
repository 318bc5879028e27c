/* Engine binding for builds whose engine has no object loader yet (the loader, verifier and
 * JIT are merged separately). Every bundle load fails cleanly, so the plugin degrades to NCCL's
 * own tuning; native policies still work. bundle.c replaces this file once
 * engine/include/ncclbpf/object.h exists (CMake picks one of the two). */
#include <errno.h>
#include <stdio.h>

#include "rt_internal.h"

int rt_bundle_load(const char *path, int engine, struct rt_policy *p,
		   struct ncclbpf_reload_report *r)
{
	(void)path;
	(void)engine;
	(void)p;
	snprintf(r->msg, sizeof(r->msg), "this build has no eBPF object loader");
	return -ENOSYS;
}

int rt_bundle_load_mem(const void *image, size_t len, const char *name, int engine,
		       struct rt_policy *p, struct ncclbpf_reload_report *r)
{
	(void)image;
	(void)len;
	(void)name;
	return rt_bundle_load(NULL, engine, p, r);
}

void rt_bundle_free(struct rt_policy *p)
{
	(void)p;
}

uint32_t rt_bundle_carry_maps(struct rt_policy *p, const struct rt_policy *old)
{
	(void)p;
	(void)old;
	return 0;
}

struct ebpf_map *rt_bundle_find_map(const struct rt_policy *p, const char *name)
{
	(void)p;
	(void)name;
	return NULL;
}

int rt_bundle_run_interp(const struct ebpf_prog *prog, void *ctx)
{
	(void)prog;
	(void)ctx;
	return -ENOSYS;
}

int rt_bundle_run_interp_r0(const struct ebpf_prog *prog, void *ctx, uint64_t *r0)
{
	(void)prog;
	(void)ctx;
	(void)r0;
	return -ENOSYS;
}

int rt_jit_available(void)
{
	return 0;
}
