/* replay_maps.h */
#include "replay_maps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inspect_client.h"
#include "map_show.h"

/* Is name in the comma-separated list? */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && !strncmp(p, name, n))
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/* A name in the list that the bundle lacks, or NULL. */
static const char *missing(const char *list, const struct insp_recs *maps, char *buf, size_t len)
{
	for (const char *p = list; p;) {
		const char *e = strchr(p, ',');
		snprintf(buf, len, "%.*s", (int)(e ? (size_t)(e - p) : strlen(p)), p);
		int found = 0;
		for (int i = 0; i < maps->n && !found; i++)
			found = !strcmp(maps->r[i].word, "map") && insp_get(&maps->r[i], "name") &&
				!strcmp(insp_get(&maps->r[i], "name"), buf);
		if (!found)
			return buf;
		p = e ? e + 1 : NULL;
	}
	return NULL;
}

int replay_maps_show(const char *which, const char *key, struct json *j)
{
	int all = !which || !strcmp(which, "all");
	char dbuf[4200], err[600], miss[256];
	struct insp_proc p;
	struct insp_conn c;
	if (insp_find(insp_default_dir(dbuf, sizeof(dbuf)), (int)getpid(), &p,
		      "ncclbpf replay: cannot show the maps") != 0)
		return 1;
	if (insp_connect(&p, &c) != 0) {
		fprintf(stderr, "ncclbpf replay: cannot show the maps: %s\n",
			c.msg[0] ? c.msg : "the plugin's inspection server does not answer");
		return 1;
	}
	struct insp_recs maps;
	int rc = 0;
	if (insp_collect(&c, "maps", &maps, err, sizeof(err)) != 0) {
		fprintf(stderr, "ncclbpf replay: cannot list the maps: %s\n", err);
		insp_close(&c);
		return 1;
	}
	if (!all && missing(which, &maps, miss, sizeof(miss))) {
		fprintf(stderr, "ncclbpf replay: --maps: the policy has no map '%s'\n", miss);
		rc = 1;
	}
	if (j) {
		json_key(j, key);
		json_arr(j);
	}
	for (int i = 0; i < maps.n && !rc; i++) {
		const struct insp_rec *m = &maps.r[i];
		const char *name = insp_get(m, "name");
		if (strcmp(m->word, "map") || !name || (!all && !listed(which, name)))
			continue;
		char req[400];
		snprintf(req, sizeof(req), "map dump %s", name);
		struct insp_recs rs;
		if (insp_collect(&c, req, &rs, err, sizeof(err)) != 0) {
			/* A ring buffer holds records, not elements: named, not dumped. */
			if (!j)
				printf("map %s: %s, not dumped (%s)\n", name, insp_get(m, "type"),
				       strcmp(insp_get(m, "type"), "ringbuf")
					   ? err
					   : "records, not elements");
			continue;
		}
		if (j)
			map_show_dump_json(j, &rs);
		else
			map_show_dump(&rs);
		insp_recs_free(&rs);
	}
	if (j)
		json_end(j);
	insp_recs_free(&maps);
	insp_close(&c);
	return rc;
}
