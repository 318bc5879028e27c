/* JSON lines: one object per sampled collective (docs/deploying.md lists the fields and how
 * they map onto NCCL Inspector's). Flat, so that a line is one event for log shippers and jq;
 * written by the exporter thread from the queued record. */
#include <stdatomic.h>
#include <string.h>

#include "telem_internal.h"

void telem_json_record(struct tbuf *b, const struct telem_jrec *r)
{
	const struct telem_config *c = &telem_cfg;
	char name[sizeof(telem_slots[0].name)] = "";
	if (r->slot < NCCLBPF_TELEM_COMMS) {
		const struct ncclbpf_telem_comm *t = &telem_slots[r->slot];
		memcpy(name, t->name, sizeof(name));
		name[sizeof(name) - 1] = 0;
		if (t->comm_id != r->comm_id)
			name[0] = 0; /* the slot was reused since */
	}
	uint64_t size = ncclbpf_telem_size(r->coll, r->msg_bytes, r->n_ranks);
	uint64_t ns = r->gpu_end > r->gpu_start ? r->gpu_end - r->gpu_start : 0;
	double algbw = ns ? (double)size / (double)ns : 0;
	tb_printf(b, "{\"ts_us\":%llu,\"host\":\"", (unsigned long long)(r->unix_ns / 1000));
	tb_escaped(b, c->id.host);
	tb_printf(b, "\",\"pid\":%d,\"job_id\":\"", c->id.pid);
	tb_escaped(b, c->id.job);
	tb_puts(b, "\",\"rank\":\"");
	tb_escaped(b, c->id.rank);
	tb_puts(b, "\",\"local_rank\":\"");
	tb_escaped(b, c->id.local_rank);
	tb_puts(b, "\",\"gpu\":\"");
	tb_escaped(b, c->id.gpu);
	tb_printf(b, "\",\"comm\":\"%016llx\",\"comm_name\":\"", (unsigned long long)r->comm_id);
	tb_escaped(b, name);
	tb_printf(b,
		  "\",\"comm_rank\":%u,\"comm_size\":%u,\"n_nodes\":%u,\"coll\":\"%s\","
		  "\"seq\":%llu,\"msg_size_bytes\":%llu,\"size_bytes\":%llu,\"algo\":\"%s\","
		  "\"proto\":\"%s\",\"channels\":%u,\"exec_time_us\":%.3f,\"algbw_gbs\":%.6f,"
		  "\"busbw_gbs\":%.6f,\"channel_max_us\":%.3f,\"gpu_start_ns\":%llu,"
		  "\"gpu_end_ns\":%llu,"
		  "\"timing_source\":\"kernel_gpu\"}",
		  r->rank, r->n_ranks, r->n_nodes, ncclbpf_telem_coll_name(r->coll),
		  (unsigned long long)r->seq, (unsigned long long)r->msg_bytes,
		  (unsigned long long)size, ncclbpf_telem_algo_name(r->algo),
		  ncclbpf_telem_proto_name(r->proto), r->n_channels, (double)ns / 1e3, algbw,
		  algbw * ncclbpf_telem_bus_factor(r->coll, r->n_ranks),
		  (double)r->longest_ch_ns / 1e3, (unsigned long long)r->gpu_start,
		  (unsigned long long)r->gpu_end);
	tb_eol(b);
}
