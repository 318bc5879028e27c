/* Walks a map's elements from the user side (include/ncclbpf/map_walk.h). */
#include "ncclbpf/map_walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/maps.h"

int ncclbpf_map_walk(struct ebpf_map *m, uint64_t limit, ncclbpf_map_elem_fn fn, void *arg)
{
	size_t ks = ebpf_map__key_size(m), vs = ebpf_map__user_value_size(m);
	unsigned char *key = malloc(ks ? ks : 1), *next = malloc(ks ? ks : 1);
	unsigned char *val = malloc(vs ? vs : 1);
	int err = key && next && val ? 0 : -ENOMEM;
	const void *prev = NULL;
	for (uint64_t n = 0; !err && (!limit || n < limit); n++) {
		err = ebpf_map__get_next_key(m, prev, next);
		if (err) {
			if (err == -ENOENT)
				err = 0; /* the end */
			break;
		}
		if (ebpf_map__user_lookup(m, next, val) == 0)
			err = fn(next, val, arg);
		memcpy(key, next, ks);
		prev = key;
	}
	free(key);
	free(next);
	free(val);
	return err;
}
