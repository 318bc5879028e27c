/* replay_net.h */
#include "ebpf/file.h"
#include "replay_net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ncclbpf.h"
#include "ncclbpf/runtime.h"
#include "ncclbpf/trace.h"
#include "replay_maps.h"

/* The runtime's WARN lines (a policy that did not load) reach the user; its INFO lines are the
 * plugin's business, not the replay's. */
static void warn_only(int level, const char *msg)
{
	if (level == NCCLBPF_LOG_WARN)
		fprintf(stderr, "%s\n", msg);
}

/* Reads trace's records, running each net one when run is set. */
static void scan(FILE *f, int run, struct replay_net_counts *n)
{
	char line[4096], err[256];
	while (fgets(line, sizeof(line), f)) {
		struct ncclbpf_trace_rec r;
		int k = ncclbpf_trace_parse(line, &r, err, sizeof(err));
		if (k < 0)
			return; /* the tuner side of the replay reports it, with its line */
		if (k == 0)
			continue;
		if (r.kind != NCCLBPF_TRACE_NET) {
			n->other++;
			continue;
		}
		n->records++;
		if (r.net_op >= REPLAY_NET_OPS)
			continue; /* the parser knows only NCCLBPF_NET_* names */
		n->events[r.net_op]++;
		if (!run)
			continue;
		struct ncclbpf_net_ctx x = {.comm_id = r.comm_id,
					    .bytes = r.n_bytes,
					    .time_ns = r.t_ns,
					    .duration_ns = r.dur_ns,
					    .op = r.net_op,
					    .dev = r.dev,
					    .peer = (uint32_t)r.peer,
					    .tag = r.tag,
					    .peer_port = r.peer_port};
		memcpy(x.peer_addr, r.peer_addr, sizeof(x.peer_addr));
		uint64_t ret = 0;
		if (ncclbpf_rt_net_replay(&x, &ret) != 0)
			continue;
		n->runs[r.net_op]++;
		/* Completions' results are not used by the plugin, so none is recorded. */
		if (r.has_ret) {
			n->compared[r.net_op]++;
			n->differ[r.net_op] += ret != r.ret;
		}
	}
}

static void print_counts(const struct replay_net_counts *n, struct json *j)
{
	if (j) {
		json_key(j, "net");
		json_obj(j);
		json_ku64(j, "events", n->records);
		json_key(j, "ops");
		json_arr(j);
	} else {
		printf("%-14s %8s %8s %9s %7s\n", "net op", "events", "runs", "compared", "differ");
	}
	for (uint32_t op = 1; op < REPLAY_NET_OPS; op++) {
		const char *name = ncclbpf_trace_net_op_name(op);
		if (j) {
			json_obj(j);
			json_kstr(j, "op", name);
			json_ku64(j, "events", n->events[op]);
			json_ku64(j, "runs", n->runs[op]);
			json_ku64(j, "compared", n->compared[op]);
			json_ku64(j, "differ", n->differ[op]);
			json_end(j);
		} else if (n->events[op]) {
			printf("%-14s %8llu %8llu %9llu %7llu\n", name,
			       (unsigned long long)n->events[op], (unsigned long long)n->runs[op],
			       (unsigned long long)n->compared[op],
			       (unsigned long long)n->differ[op]);
		}
	}
	if (j) {
		json_end(j);
		json_end(j);
		return;
	}
	uint64_t runs = 0, compared = 0, differ = 0;
	for (int op = 1; op < REPLAY_NET_OPS; op++) {
		runs += n->runs[op];
		compared += n->compared[op];
		differ += n->differ[op];
	}
	printf("%llu net events replayed, %llu program runs, %llu of %llu results differ from "
	       "the recorded ones\n",
	       (unsigned long long)n->records, (unsigned long long)runs, (unsigned long long)differ,
	       (unsigned long long)compared);
}

int replay_net(const char *trace, int bundle, const char *which, struct json *j,
	       struct replay_net_counts *n)
{
	memset(n, 0, sizeof(*n));
	char why[4200];
	FILE *f = ebpf_fopen_regular(trace, why, sizeof(why));
	if (!f)
		return cli_fail("%s", why);
	scan(f, 0, n);
	if (!n->records) {
		fclose(f);
		return 0;
	}
	int rc = 0;
	memset(n, 0, sizeof(*n));
	rewind(f);
	if (bundle) {
		ncclbpf_rt_set_logger(warn_only);
		ncclbpf_rt_acquire();
	}
	scan(f, bundle, n);
	fclose(f);
	print_counts(n, j);
	if (bundle && which && n->other && !j)
		printf("maps after the net events (before the tuner and profiler records):\n");
	if (bundle && which && replay_maps_show(which, n->other ? "net_maps" : "maps", j))
		rc = 1;
	if (bundle)
		ncclbpf_rt_release(); /* and its inspection server: the plugin's takes its place */
	return rc;
}
