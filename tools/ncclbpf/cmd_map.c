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
#include "ncclbpf/hex.h"

#define KEY_MAX	  512  /* bytes of a KEY */
#define VALUE_MAX 3000 /* bytes of a VALUE (a per-CPU map's every CPU) */

/* KEY or VALUE (what, in messages) as bytes: hex in memory order ("0x" optional; the runtime's
 * one decoder, ncclbpf/hex.h) or typed little-endian integers joined by commas ("u32:5,u64:1").
 * Returns the number of bytes, or -1 with the usage error printed. */
static int to_bytes(const char *what, const char *arg, unsigned char *out, size_t max)
{
	char why[160], a[48]; /* the argument as messages show it: its start, when long */
	snprintf(a, sizeof(a), "%s", arg);
	if (strlen(arg) >= sizeof(a))
		memcpy(a + sizeof(a) - 4, "...", 4);
	if (!strchr(arg, ':')) {
		const char *h = !strncmp(arg, "0x", 2) ? arg + 2 : arg;
		int n = ncclbpf_unhex(h, out, max, why, sizeof(why));
		if (n < 0)
			return cli_usage_error("%s '%s': %s", what, a, why), -1;
		if (!n)
			return cli_usage_error("%s '%s': no bytes", what, a), -1;
		return n;
	}
	char buf[1024];
	size_t n = 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned bits = 0;
		char *colon = strchr(t, ':'), *end;
		if (!colon || sscanf(t, "u%u:", &bits) != 1 ||
		    (bits != 8 && bits != 16 && bits != 32 && bits != 64))
			return cli_usage_error("%s '%s': '%s' is not u8:, u16:, u32: or u64: and a "
					       "number",
					       what, a, t),
			       -1;
		errno = 0;
		unsigned long long v = strtoull(colon + 1, &end, 0);
		if (*end || end == colon + 1 || colon[1] == '-' || errno)
			return cli_usage_error("%s '%s': '%s' is not a number", what, a, colon + 1),
			       -1;
		if (bits < 64 && v >> bits)
			return cli_usage_error("%s '%s': %llu does not fit in u%u", what, a, v,
					       bits),
			       -1;
		if (n + bits / 8 > max)
			return cli_usage_error("%s '%s': more than %zu bytes", what, a, max), -1;
		for (unsigned k = 0; k < bits / 8; k++)
			out[n++] = (unsigned char)(v >> (8 * k));
	}
	if (!n)
		return cli_usage_error("%s '%s': no bytes", what, a), -1;
	return (int)n;
}

struct find_map {
	const char *name;
	char cls[32];
	unsigned long key_size, value_size, cpus;
};

static unsigned long rec_ul(const struct insp_rec *r, const char *key)
{
	const char *v = insp_get(r, key);
	return v ? strtoul(v, NULL, 10) : 0;
}

static void on_find(const struct insp_rec *r, void *arg)
{
	struct find_map *f = arg;
	if (!strcmp(r->word, "map") && insp_get(r, "name") &&
	    !strcmp(insp_get(r, "name"), f->name)) {
		snprintf(f->cls, sizeof(f->cls), "%s", insp_get(r, "class"));
		f->key_size = rec_ul(r, "key_size");
		f->value_size = rec_ul(r, "value_size");
		f->cpus = rec_ul(r, "cpus");
	}
}

/* Do kl key bytes and vl value bytes fit map f? Else why, in words. A per-CPU map takes one
 * value (for every CPU) or every CPU's, each padded to 8 bytes. */
static int sizes_fit(const struct find_map *f, size_t kl, size_t vl, char *why, size_t len)
{
	unsigned long all = f->cpus * ((f->value_size + 7) & ~7ul);
	if (kl != f->key_size) {
		snprintf(why, len, "map '%s' has %lu-byte keys; KEY is %zu bytes", f->name,
			 f->key_size, kl);
		return 0;
	}
	if (vl != f->value_size && (f->cpus <= 1 || vl != all)) {
		if (f->cpus > 1)
			snprintf(why, len,
				 "map '%s' has %lu-byte values per CPU (one for every CPU, or all "
				 "%lu CPUs' padded to 8 bytes: %lu); VALUE is %zu bytes",
				 f->name, f->value_size, f->cpus, all, vl);
		else
			snprintf(why, len, "map '%s' has %lu-byte values; VALUE is %zu bytes",
				 f->name, f->value_size, vl);
		return 0;
	}
	return 1;
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

static int update_uniform(const struct insp_proc *p, const char *name, const unsigned char *key,
			  size_t kl, const unsigned char *val, size_t vl)
{
	static const char refuse[] = "uniform map: use the control plane (NCCLBPF_CP_DIR)";
#ifdef HAVE_CONTROL_PLANE
	if (p->cp) {
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
	(void)key;
	(void)kl;
	(void)val;
	(void)vl;
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
	unsigned char key[KEY_MAX], val[VALUE_MAX];
	int kl = 0, vl = 0;
	if (want == 5 && ((kl = to_bytes("KEY", pos[3], key, sizeof(key))) < 0 ||
			  (vl = to_bytes("VALUE", pos[4], val, sizeof(val))) < 0))
		return CLI_USAGE;
	if (json && want == 5)
		return cli_usage_error("--json goes with list and dump");
	struct insp_proc p;
	struct insp_conn c;
	if (insp_attach(dir, pid, &p, &c, "ncclbpf map") != 0)
		return CLI_FAIL;
	char err[600], req[8400];
	int ret = 0;
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
		struct find_map f = {.name = pos[2]};
		ret = insp_request(&c, "maps", on_find, &f, err, sizeof(err));
		if (!ret && !f.cls[0]) {
			snprintf(err, sizeof(err), "no map '%s' in the active policy", pos[2]);
			ret = -1;
		}
		if (!ret && !sizes_fit(&f, (size_t)kl, (size_t)vl, err, sizeof(err)))
			ret = -1;
		if (!ret && !strcmp(f.cls, "uniform")) {
			insp_close(&c);
			return update_uniform(&p, pos[2], key, (size_t)kl, val, (size_t)vl);
		}
		char hk[2 * KEY_MAX + 1], hv[2 * VALUE_MAX + 1];
		ncclbpf_hex(key, (size_t)kl, hk);
		ncclbpf_hex(val, (size_t)vl, hv);
		if (!ret) {
			snprintf(req, sizeof(req), "map update %s %s %s", pos[2], hk, hv);
			ret = insp_request(&c, req, NULL, NULL, err, sizeof(err));
		}
		if (!ret)
			printf("map %s of process %d (%s map): key %s = %s\n", pos[2], pid, f.cls,
			       hk, hv);
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
	    "  KEY, VALUE     hex bytes in memory order, or u8:/u16:/u32:/u64:N[,...]; exactly\n"
	    "                 the map's key and value size (per-CPU: one value or every CPU's)\n"
	    "  --json         list and dump as JSON (docs/cli-json.md)\n"
	    "  --timeout SEC  how long a uniform map's update waits for every rank to answer,\n"
	    "                 and then to switch (default 10 and 5 seconds)\n" INSP_DIR_HELP,
    .run = cmd_map);
