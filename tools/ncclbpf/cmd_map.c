/* ncclbpf map list|dump|update PID ...: the maps of the policy a running process uses, read and
 * written through its inspection server.
 *
 * A dump shows keys and values typed by the bundle's BTF (structs by field, enums by name; the
 * plugin formats them, map_show.c prints them). On the command line keys and values are the
 * map's bytes in memory order, as hex ("0500000000000000"), or typed little-endian integers
 * joined by commas ("u32:5", "u64:1,u64:2"). Per-CPU maps show every CPU's value; an update
 * gives one value (set on every CPU) or all of them.
 *
 * Updates respect rank consistency (each map's class, as loading decided it): a rank-local map
 * (some program writes it, so its contents differ between ranks anyway and no decision may
 * depend on it) is changed in that process at once. A uniform map may feed tuner decisions,
 * which must change on every rank at the same call: such an update belongs to the control
 * plane's consistent activation (see update_uniform). A per-communicator map belongs to its
 * communicators' programs: the process refuses updates. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inspect_client.h"
#include "map_show.h"

/* Hex or typed integers -> lowercase hex (out holds 2 * max_bytes + 1). 0 or -1. */
static int to_hex(const char *arg, char *out, size_t max_bytes)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	out[0] = 0;
	if (strchr(arg, ':')) {
		char buf[1024];
		snprintf(buf, sizeof(buf), "%s", arg);
		char *save = NULL;
		for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			unsigned bits;
			char *colon = strchr(t, ':'), *end;
			if (!colon || sscanf(t, "u%u:", &bits) != 1 ||
			    (bits != 8 && bits != 16 && bits != 32 && bits != 64))
				return -1;
			unsigned long long v = strtoull(colon + 1, &end, 0);
			if (*end || end == colon + 1 || (bits < 64 && v >> bits))
				return -1;
			for (unsigned b = 0; b < bits / 8; b++, n++) {
				if (n >= max_bytes)
					return -1;
				unsigned char byte = (unsigned char)(v >> (8 * b));
				out[2 * n] = hex[byte >> 4];
				out[2 * n + 1] = hex[byte & 15];
			}
		}
	} else {
		const char *s = !strncmp(arg, "0x", 2) ? arg + 2 : arg;
		size_t len = strlen(s);
		if (!len || len % 2 || len / 2 > max_bytes)
			return -1;
		for (size_t i = 0; i < len; i++) {
			char c = s[i];
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
			      (c >= 'A' && c <= 'F')))
				return -1;
			out[i] = (char)(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
		}
		n = len / 2;
	}
	out[2 * n] = 0;
	return n ? 0 : -1;
}

struct find_map {
	const char *name;
	char cls[32];
};

static void on_find(const struct insp_rec *r, void *arg)
{
	struct find_map *f = arg;
	if (!strcmp(r->word, "map") && insp_get(r, "name") && !strcmp(insp_get(r, "name"), f->name))
		snprintf(f->cls, sizeof(f->cls), "%s", insp_get(r, "class"));
}

/* A uniform map changes through the control plane's consistent activation (issue #7): every
 * rank of the job applies the new contents at the same per-communicator call, so the update is
 * job-wide, not just for PID. The process must take part in a control plane (it was started
 * with NCCLBPF_CP_DIR, the directory its record is in). Builds without the control plane's
 * controller (runtime/include/ncclbpf/control.h) refuse: changing one process alone would let
 * its decisions differ from the other ranks'. */
#if defined(__has_include)
#if __has_include("ncclbpf/control.h")
#define HAVE_CONTROL_PLANE 1
#include "ncclbpf/control.h"
#endif
#endif

/* --timeout SEC, for the control plane's waits (0: its defaults). */
static int uniform_timeout_ms;

static size_t unhex(const char *h, unsigned char *out)
{
	size_t n = strlen(h) / 2;
	for (size_t i = 0; i < n; i++) {
		unsigned b;
		sscanf(h + 2 * i, "%2x", &b);
		out[i] = (unsigned char)b;
	}
	return n;
}

static int update_uniform(const struct insp_proc *p, const char *name, const char *key_hex,
			  const char *val_hex)
{
	static const char refuse[] = "uniform map: use the control plane (NCCLBPF_CP_DIR)";
#ifdef HAVE_CONTROL_PLANE
	if (p->cp) {
		unsigned char key[512], val[3000];
		size_t kl = unhex(key_hex, key), vl = unhex(val_hex, val);
		struct ncclbpf_cp_opts o = {.sz = sizeof(o),
					    .timeout_ms = uniform_timeout_ms,
					    .done_timeout_ms = uniform_timeout_ms};
		struct ncclbpf_cp_report rep = {.sz = sizeof(rep)};
		printf("map %s is uniform: proposing the update to every rank registered in %s\n",
		       name, p->dir);
		int r = ncclbpf_cp_map_update(p->dir, name, key, kl, val, vl, &o, &rep);
		if (r < 0)
			fprintf(stderr, "ncclbpf map update: %s\n", rep.msg);
		else
			ncclbpf_cp_report_print(&rep, stdout);
		ncclbpf_cp_report_free(&rep);
		return r == 0 ? 0 : 1;
	}
	fprintf(stderr,
		"ncclbpf map update: %s; process %d was not started with NCCLBPF_CP_DIR, so '%s' "
		"cannot change consistently on every rank\n",
		refuse, p->pid, name);
#else
	(void)key_hex;
	(void)val_hex;
	(void)unhex;
	fprintf(stderr,
		"ncclbpf map update: %s; '%s' may feed tuner decisions, which must change on "
		"every rank at the same call (this build has no control-plane controller)\n",
		refuse, name);
	(void)p;
#endif
	return 1;
}

/* list (dump 0) or dump: the answer, to a person or as JSON (docs/cli-json.md). */
static void show(const struct insp_recs *rs, int dump, int json, int pid)
{
	struct json j;
	if (!json) {
		if (dump)
			map_show_dump(rs);
		for (int i = 0; !dump && i < rs->n; i++)
			if (!strcmp(rs->r[i].word, "map"))
				map_show_info(&rs->r[i]);
		return;
	}
	json_init(&j, stdout);
	if (dump) {
		map_show_dump_json(&j, rs);
		return;
	}
	json_obj(&j);
	json_ki64(&j, "pid", pid);
	json_key(&j, "maps");
	json_arr(&j);
	for (int i = 0; i < rs->n; i++)
		if (!strcmp(rs->r[i].word, "map"))
			map_show_info_json(&j, &rs->r[i]);
	json_end(&j);
	json_end(&j);
}

static int cmd_map(int argc, char **argv)
{
	char dbuf[4096];
	const char *dir = NULL, *pos[6];
	int np = 0, json = 0;
	const char *timeout = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
			continue;
		}
		int k = cli_opt(argc, argv, &i, "--timeout", &timeout);
		if (k < 0)
			return CLI_USAGE;
		if (!k && (k = cli_dir_opt(argc, argv, &i, &dir)) < 0)
			return CLI_USAGE;
		if (k)
			continue;
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("unknown option '%s'", argv[i]);
		if (np == 6)
			return cli_usage_error("unexpected argument '%s'", argv[i]);
		pos[np++] = argv[i];
	}
	double t;
	if (timeout) {
		if (cli_parse_double("--timeout", timeout, 0.001, 3600, &t))
			return CLI_USAGE;
		uniform_timeout_ms = (int)(t * 1000);
	}
	if (!np)
		return cli_usage_error("list, dump or update?");
	const char *verb = pos[0];
	int want = !strcmp(verb, "list")     ? 2
		   : !strcmp(verb, "dump")   ? 3
		   : !strcmp(verb, "update") ? 5
					     : 0;
	if (!want)
		return cli_usage_error("unknown verb '%s' (list, dump, update)", verb);
	if (np != want)
		return cli_usage_error("map %s takes %s", verb,
				       want == 2   ? "PID"
				       : want == 3 ? "PID NAME"
						   : "PID NAME KEY VALUE");
	int pid = insp_parse_pid(pos[1]);
	if (pid <= 0)
		return cli_usage_error("PID '%s' is not a process id", pos[1]);
	if (!dir)
		dir = insp_default_dir(dbuf, sizeof(dbuf));
	struct insp_proc p;
	if (insp_find(dir, pid, &p, "ncclbpf map") != 0)
		return 1;
	struct insp_conn c;
	if (insp_connect(&p, &c) != 0)
		return cli_fail("process %d: %s", pid, c.msg[0] ? c.msg : strerror(errno));
	char err[600], req[8400];
	int ret = 0;
	if (json && want == 5) {
		insp_close(&c);
		return cli_usage_error("--json goes with list and dump");
	}
	if (want < 5) {
		struct insp_recs rs;
		if (want == 2)
			snprintf(req, sizeof(req), "maps");
		else
			snprintf(req, sizeof(req), "map dump %s", pos[2]);
		ret = insp_collect(&c, req, &rs, err, sizeof(err));
		if (!ret)
			show(&rs, want == 3, json, pid);
		insp_recs_free(&rs);
	} else {
		char key[2 * 512 + 1], val[2 * 3000 + 1];
		if (to_hex(pos[3], key, 512) != 0 || to_hex(pos[4], val, 3000) != 0) {
			insp_close(&c);
			return cli_usage_error(
			    "KEY and VALUE must be hex bytes or u8:/u16:/u32:/u64: "
			    "integers");
		}
		struct find_map f = {.name = pos[2]};
		ret = insp_request(&c, "maps", on_find, &f, err, sizeof(err));
		if (!ret && !f.cls[0]) {
			snprintf(err, sizeof(err), "no map '%s' in the active policy", pos[2]);
			ret = -1;
		}
		if (!ret && !strcmp(f.cls, "uniform")) {
			insp_close(&c);
			return update_uniform(&p, pos[2], key, val);
		}
		if (!ret) {
			snprintf(req, sizeof(req), "map update %s %s %s", pos[2], key, val);
			ret = insp_request(&c, req, NULL, NULL, err, sizeof(err));
		}
		if (!ret)
			printf("map %s of process %d (%s map): key %s = %s\n", pos[2], pid, f.cls,
			       key, val);
	}
	insp_close(&c);
	if (ret)
		return cli_fail("%s: process %d: %s", verb, pid, err);
	return 0;
}

NCCLBPF_COMMAND(
    map_cmd, .name = "map",
    .args = "list PID | dump PID NAME | update PID NAME KEY VALUE  [--dir DIR] [--json] "
	    "[--timeout SEC]",
    .summary = "read or change a running process's policy maps",
    .help = "  dump           every element; keys and values typed by the bundle's BTF (struct\n"
	    "                 fields by name, enums by name), else integers or hex\n"
	    "  KEY, VALUE     hex bytes in memory order, or u8:/u16:/u32:/u64:N[,...]\n"
	    "  --json         list and dump as JSON (docs/cli-json.md)\n"
	    "  --timeout SEC  how long a uniform map's update waits for every rank to answer,\n"
	    "                 and then to switch (default 10 and 5 seconds)\n" INSP_DIR_HELP,
    .run = cmd_map);
