/* map_show.h */
#include "map_show.h"

#include <stdio.h>
#include <string.h>

static const char *get(const struct insp_rec *r, const char *k)
{
	const char *v = insp_get(r, k);
	return v ? v : "?";
}

void map_show_info(const struct insp_rec *r)
{
	printf("map %s: %s (%s), key %s B, value %s B, max %s entries, %s in use, %s CPU%s, %s\n",
	       get(r, "name"), get(r, "type"), get(r, "kind"), get(r, "key_size"),
	       get(r, "value_size"), get(r, "max_entries"), get(r, "entries"), get(r, "cpus"),
	       insp_getu(r, "cpus") == 1 ? "" : "s", get(r, "class"));
}

void map_show_info_json(struct json *j, const struct insp_rec *r)
{
	static const char *const text[] = {"name", "type", "kind", "class"};
	static const char *const num[] = {"key_size", "value_size", "max_entries",
					  "cpus",     "entries",    "updates"};
	json_obj(j);
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		json_kstr(j, text[i], insp_get(r, text[i]));
	for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++)
		json_ku64(j, num[i], insp_getu(r, num[i]));
	json_end(j);
}

/* The JSON the server computed for hex field `field` ("key", "value", "cpu3"), or NULL (a
 * plugin that sends none). */
static const char *typed(const struct insp_rec *r, const char *field)
{
	char k[64];
	snprintf(k, sizeof(k), "%s_json", field);
	return insp_get(r, k);
}

/* Per-CPU values come as cpu0, cpu1, ...: the CPU number of key k, or -1. */
static int cpu_of(const char *k)
{
	unsigned c;
	char rest;
	return sscanf(k, "cpu%u%c", &c, &rest) == 1 ? (int)c : -1;
}

/* Without typed text: the hex bytes, and 4- and 8-byte ones as little-endian integers. */
static void print_hex(const char *hex)
{
	size_t n = strlen(hex) / 2;
	printf("%s", hex);
	if (n != 4 && n != 8)
		return;
	unsigned long long v = 0;
	for (size_t i = n; i-- > 0;) {
		unsigned b;
		sscanf(hex + 2 * i, "%2x", &b);
		v = (v << 8) | b;
	}
	printf(" (u%zu %llu)", n * 8, v);
}

static void print_field(const struct insp_rec *r, const char *field)
{
	const char *t = typed(r, field);
	if (t)
		printf("%s", t);
	else
		print_hex(get(r, field));
}

void map_show_dump(const struct insp_recs *rs)
{
	int n = 0;
	for (int i = 0; i < rs->n; i++) {
		const struct insp_rec *r = &rs->r[i];
		if (!strcmp(r->word, "map")) {
			map_show_info(r);
			continue;
		}
		if (strcmp(r->word, "elem"))
			continue;
		n++;
		printf("  key ");
		print_field(r, "key");
		printf(":");
		if (insp_get(r, "comm")) /* a per-communicator map: this communicator's instance */
			printf(" comm %s", get(r, "comm"));
		for (int k = 0; k < r->n; k++)
			if (!strcmp(r->key[k], "value") || cpu_of(r->key[k]) >= 0) {
				printf(" %s ", r->key[k]);
				print_field(r, r->key[k]);
			}
		printf("\n");
	}
	printf("%d element%s\n", n, n == 1 ? "" : "s");
}

/* "NAME": typed JSON (or the hex as a string), "NAME_hex": the bytes. */
static void json_field(struct json *j, const struct insp_rec *r, const char *field,
		       const char *name)
{
	char k[64];
	const char *t = typed(r, field);
	json_key(j, name);
	if (t)
		json_raw(j, t);
	else
		json_str(j, get(r, field));
	snprintf(k, sizeof(k), "%s_hex", name);
	json_kstr(j, k, get(r, field));
}

void map_show_dump_json(struct json *j, const struct insp_recs *rs)
{
	json_obj(j);
	for (int i = 0; i < rs->n; i++)
		if (!strcmp(rs->r[i].word, "map")) {
			json_key(j, "map");
			map_show_info_json(j, &rs->r[i]);
			break;
		}
	json_key(j, "elements");
	json_arr(j);
	for (int i = 0; i < rs->n; i++) {
		const struct insp_rec *r = &rs->r[i];
		if (strcmp(r->word, "elem"))
			continue;
		json_obj(j);
		json_field(j, r, "key", "key");
		if (insp_get(r, "comm"))
			json_ku64(j, "comm", insp_getu(r, "comm"));
		if (insp_get(r, "value")) {
			json_field(j, r, "value", "value");
		} else {
			json_key(j, "values");
			json_arr(j);
			for (int k = 0; k < r->n; k++) {
				int cpu = cpu_of(r->key[k]);
				if (cpu < 0)
					continue;
				json_obj(j);
				json_ku64(j, "cpu", (uint64_t)cpu);
				json_field(j, r, r->key[k], "value");
				json_end(j);
			}
			json_end(j);
		}
		json_end(j);
	}
	json_end(j);
	json_end(j);
}
