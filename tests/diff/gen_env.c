/* Engine maps for generated programs (gen_env.h). */
#include "gen_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gen_env_free(struct gen_env *env)
{
	for (uint32_t i = 0; i < env->n_maps; i++)
		ebpf_map__free(env->maps[i]);
	memset(env, 0, sizeof(*env));
}

int gen_env_prepare(struct gen_env *env, const struct gen_prog *p, char *err, size_t err_len)
{
	if (env->n_maps == p->n_maps && !memcmp(env->defs, p->maps, p->n_maps * sizeof(p->maps[0])))
		return 0;
	gen_env_free(env);
	for (uint32_t i = 0; i < p->n_maps; i++) {
		char name[16];
		snprintf(name, sizeof(name), "gen%u", i);
		struct ebpf_map_def def = {.sz = sizeof(def),
					   .name = name,
					   .type = p->maps[i].type,
					   .key_size = p->maps[i].key_size,
					   .value_size = p->maps[i].value_size,
					   .max_entries = p->maps[i].max_entries};
		env->maps[i] = ebpf_map__create(&def, err, err_len);
		if (!env->maps[i]) {
			int e = errno ? errno : EINVAL;
			gen_env_free(env);
			return -e;
		}
		env->defs[i] = p->maps[i];
		env->n_maps = i + 1;
	}
	return 0;
}

static int drop_record(void *ctx, const void *data, uint32_t size)
{
	return 0;
}

void gen_env_reset(struct gen_env *env)
{
	for (uint32_t i = 0; i < env->n_maps; i++) {
		struct ebpf_map *m = env->maps[i];
		uint8_t key[8], next[8];
		switch (ebpf_map__type(m)) {
		case EBPF_MAP_TYPE_RINGBUF:
			ebpf_ringbuf__consume(m, drop_record, NULL, 0);
			break;
		case EBPF_MAP_TYPE_ARRAY:
		case EBPF_MAP_TYPE_PERCPU_ARRAY: {
			void *zero = calloc(1, ebpf_map__user_value_size(m));
			for (uint32_t k = 0; zero && k < ebpf_map__max_entries(m); k++)
				ebpf_map__user_update(m, &k, zero, EBPF_ANY);
			free(zero);
			break;
		}
		default: /* hashes: delete the first key until none is left (bounded) */
			for (uint32_t k = 0; k <= ebpf_map__max_entries(m) &&
					     !ebpf_map__get_next_key(m, NULL, next);
			     k++) {
				memcpy(key, next, sizeof(key));
				ebpf_map__user_delete(m, key);
			}
			break;
		}
	}
}
