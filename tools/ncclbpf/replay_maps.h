/* The maps of the policy a replay ran, read when the replay is done through the inspection
 * server of the runtime that ran it (the plugin's, or the one of the replay's net events, in
 * this very process; one at a time) and shown as `ncclbpf map dump` shows
 * them (map_show.h: typed by the bundle's BTF). */
#ifndef NCCLBPF_REPLAY_MAPS_H
#define NCCLBPF_REPLAY_MAPS_H

#include "cli_json.h"

/* which: NULL or "all" for every map with elements (ring buffers hold records, not elements,
 * and are named only), else a comma-separated list of names (each must exist). j: NULL for
 * text on stdout, else the maps go into the open JSON object as "KEY": [dump, ...]. Returns
 * 0, or 1 after a message on stderr. */
int replay_maps_show(const char *which, const char *key, struct json *j);

#endif
