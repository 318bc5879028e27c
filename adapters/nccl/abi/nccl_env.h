/* NCCL env plugin interface, versions 1 and 2, vendored as ABI facts from NVIDIA/nccl
 * src/include/plugin/env/env_v{1,2}.h (v1: v2.28.7-1, v2: v2.30.7-1), transcribed in
 * docs/design.md §6.12.
 *
 * NCCL loads the table named ncclEnvPlugin_vN from the library NCCL_ENV_PLUGIN names (read with
 * the real getenv) and routes every ncclGetEnv through getEnv. v2 only adds the logger to init;
 * getEnv must never call it (it can re-enter NCCL's parameter mutex, §6.12). */
#ifndef NCCLBPF_NCCL_ENV_H
#define NCCLBPF_NCCL_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_common.h"

/* --- v1 (2.28.7+) -------------------------------------------------------------------------- */
typedef struct {
	const char *name;
	ncclResult_t (*init)(uint8_t ncclMajor, uint8_t ncclMinor, uint8_t ncclPatch,
			     const char *suffix);
	ncclResult_t (*finalize)(void);
	const char *(*getEnv)(const char *name);
} ncclEnv_v1_t;

/* --- v2 (2.30.7+): init also receives NCCL's logger ---------------------------------------- */
typedef struct {
	const char *name;
	ncclResult_t (*init)(uint8_t ncclMajor, uint8_t ncclMinor, uint8_t ncclPatch,
			     const char *suffix, ncclDebugLogger_t logFunction);
	ncclResult_t (*finalize)(void);
	const char *(*getEnv)(const char *name);
} ncclEnv_v2_t;

_Static_assert(sizeof(void *) == 8, "the vendored layouts are LP64");
_Static_assert(sizeof(ncclEnv_v1_t) == 32, "env v1 is 32 bytes");
_Static_assert(sizeof(ncclEnv_v2_t) == 32, "env v2 is 32 bytes");
_Static_assert(offsetof(ncclEnv_v1_t, init) == 8, "env v1 layout");
_Static_assert(offsetof(ncclEnv_v1_t, finalize) == 16, "env v1 layout");
_Static_assert(offsetof(ncclEnv_v1_t, getEnv) == 24, "env v1 layout");
_Static_assert(offsetof(ncclEnv_v2_t, init) == 8, "env v2 layout");
_Static_assert(offsetof(ncclEnv_v2_t, finalize) == 16, "env v2 layout");
_Static_assert(offsetof(ncclEnv_v2_t, getEnv) == 24, "env v2 layout");

#endif
