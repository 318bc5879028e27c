/* The `telemetry` inspection request (ncclbpf top): the built-in telemetry tables as records.
 *   telemetry enabled=0|1 comms=N overflow=N jsonl_dropped=N
 *   tcomm slot=I id=HEX name=S rank=R n_ranks=N n_nodes=N state=live|closed
 *   tcell slot=I coll=NAME size=LOWER_BYTES count=N sum_ns=N bytes=N bus_factor=F
 *         hist=N,N,...  (NCCLBPF_TELEM_TIMES counts: <= 2^k us, the last everything longer)
 *         mix=ALGO/PROTO:N,...  (the non-zero algorithm/protocol cells)
 * Read with relaxed loads on the inspection thread, like every other counter. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "inspect.h"
#include "telem/telem_internal.h"

/* One cell's record; 0 when the slot was taken by another communicator while it was read
 * (nothing is written then, and the caller stops at this slot). */
static int cell_record(struct insp_out *o, int slot, const struct ncclbpf_telem_comm *t,
		       uint32_t gen, uint32_t coll, uint32_t size)
{
	const struct ncclbpf_telem_cell *c = &t->cells[coll][size];
	uint64_t hv[NCCLBPF_TELEM_TIMES], n = telem_cell_hist(c, hv);
	if (!n)
		return telem_slot_same(t, gen);
	char hist[NCCLBPF_TELEM_TIMES * 21 + 1], mix[NCCLBPF_TELEM_MIX * 48 + 1];
	size_t h = 0, m = 0;
	for (int k = 0; k < NCCLBPF_TELEM_TIMES; k++)
		h += (size_t)snprintf(hist + h, sizeof(hist) - h, "%s%llu", k ? "," : "",
				      (unsigned long long)hv[k]);
	for (uint32_t i = 0; i < NCCLBPF_TELEM_MIX; i++) {
		uint64_t v = telem_ld(&c->mix[i]);
		if (v)
			m += (size_t)snprintf(
			    mix + m, sizeof(mix) - m, "%s%s/%s:%llu", m ? "," : "",
			    ncclbpf_telem_algo_name(telem_mix_algo(i)),
			    ncclbpf_telem_proto_name(telem_mix_proto(i)), (unsigned long long)v);
	}
	uint64_t sum_ns = telem_ld(&c->sum_ns), bytes = telem_ld(&c->bytes);
	char f[32];
	snprintf(f, sizeof(f), "%.6f", ncclbpf_telem_bus_factor(coll, t->n_ranks));
	if (!telem_slot_same(t, gen))
		return 0;
	insp_begin(o, "tcell");
	insp_kvi(o, "slot", slot);
	insp_kv(o, "coll", ncclbpf_telem_coll_name(coll));
	insp_kvu(o, "size", 1ull << size);
	insp_kvu(o, "count", n);
	insp_kvu(o, "sum_ns", sum_ns);
	insp_kvu(o, "bytes", bytes);
	insp_kv(o, "bus_factor", f);
	insp_kv(o, "hist", hist);
	insp_kv(o, "mix", mix);
	insp_end(o);
	return 1;
}

void insp_telemetry(struct insp_out *o)
{
	insp_begin(o, "telemetry");
	insp_kvi(o, "enabled", ncclbpf_telem_enabled());
	insp_kvu(o, "comms", telem_live_comms());
	insp_kvu(o, "overflow", atomic_load(&telem_overflow));
	insp_kvu(o, "jsonl_dropped", atomic_load(&telem_jsonl_dropped));
	insp_end(o);
	for (int i = 0; i < NCCLBPF_TELEM_COMMS; i++) {
		const struct ncclbpf_telem_comm *t = &telem_slots[i];
		uint32_t gen, st = telem_slot_shown(t, &gen);
		if (!st)
			continue;
		char id[20], name[sizeof(t->name)];
		snprintf(id, sizeof(id), "%016llx", (unsigned long long)t->comm_id);
		memcpy(name, t->name, sizeof(name));
		name[sizeof(name) - 1] = 0;
		uint32_t rank = t->rank, n_ranks = t->n_ranks, n_nodes = t->n_nodes;
		if (!telem_slot_same(t, gen))
			continue;
		insp_begin(o, "tcomm");
		insp_kvi(o, "slot", i);
		insp_kv(o, "id", id);
		insp_kv(o, "name", name);
		insp_kvu(o, "rank", rank);
		insp_kvu(o, "n_ranks", n_ranks);
		insp_kvu(o, "n_nodes", n_nodes);
		insp_kv(o, "state", st == NCCLBPF_TELEM_LIVE ? "live" : "closed");
		insp_end(o);
		int same = 1;
		for (uint32_t coll = 0; same && coll < NCCLBPF_TELEM_COLLS; coll++)
			for (uint32_t s = 0; same && s < NCCLBPF_TELEM_SIZES; s++)
				same = cell_record(o, i, t, gen, coll, s);
	}
}
