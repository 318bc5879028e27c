/* A map as the inspection server describes it (a "map" record, then one "elem" record per
 * element with the key and value as hex and as JSON typed by the bundle's BTF), shown to a
 * person or as JSON. Used by `ncclbpf map` and by `ncclbpf replay`, which reads the maps of the
 * plugin it drives through that plugin's own inspection server. */
#ifndef NCCLBPF_MAP_SHOW_H
#define NCCLBPF_MAP_SHOW_H

#include "cli_json.h"
#include "inspect_client.h"

/* "map NAME: array (maps), key 4 B, value 8 B, max 2 entries, 2 in use, 1 CPU, rank-local" */
void map_show_info(const struct insp_rec *map);
/* The map record as a JSON object (docs/cli-json.md). */
void map_show_info_json(struct json *j, const struct insp_rec *map);
/* A whole dump answer: the map line, one line per element ("key K: value V", per-CPU maps
 * "cpuN V" each), and the count. */
void map_show_dump(const struct insp_recs *rs);
/* A whole dump answer as {"map": {...}, "elements": [...]}. */
void map_show_dump_json(struct json *j, const struct insp_recs *rs);

#endif
