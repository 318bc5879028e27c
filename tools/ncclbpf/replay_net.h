/* `ncclbpf replay` of net records (ncclbpf/trace.h): every recorded net hook event, in the
 * trace's order, is passed as the recorded struct ncclbpf_net_ctx (times included) to the
 * policy's SEC("net/...") program, keeping map state across records, and each recorded return
 * value (connect/accept: allow or deny, isend: the pacing rate) is compared with the replayed
 * one. The net hooks have no entry point a replay could call with a recorded context (NCCL's
 * net table takes connections, not contexts), so the programs run in this process's own copy of
 * the runtime (the one the plugin embeds, linked into the CLI), with the policy loaded as the
 * plugin loads it (NCCLBPF_POLICY); its maps are shown through that runtime's inspection server
 * before the plugin's starts. */
#ifndef NCCLBPF_REPLAY_NET_H
#define NCCLBPF_REPLAY_NET_H

#include <stdint.h>

#include "cli_json.h"

#define REPLAY_NET_OPS 7 /* NCCLBPF_NET_* are 1..6 */

struct replay_net_counts {
	uint64_t records;		   /* net records read */
	uint64_t other;			   /* tuner and profiler records read */
	uint64_t events[REPLAY_NET_OPS];   /* per op: records */
	uint64_t runs[REPLAY_NET_OPS];	   /* per op: a program ran */
	uint64_t compared[REPLAY_NET_OPS]; /* connect/accept/isend: recorded and replayed r0 */
	uint64_t differ[REPLAY_NET_OPS];   /* of those, different */
};

/* Replays the net records of trace with the policy NCCLBPF_POLICY names, loaded as the plugin
 * loads it (set NCCLBPF_WATCH=0 before: the replay's one reload point, --reload-at, counts
 * tuner calls on the plugin's side) (none when !bundle:
 * nothing runs, the records are counted), prints what ran (JSON: "net": {...} into j), then
 * the maps (which: as replay_maps_show; NULL: none) under "maps", or "net_maps" when the trace
 * has tuner or profiler records too. Does nothing when the trace has no net record. n gets
 * the counts. Returns 0, or 1 after a message on stderr. */
int replay_net(const char *trace, int bundle, const char *which, struct json *j,
	       struct replay_net_counts *n);

#endif
