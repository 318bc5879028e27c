#!/usr/bin/env python3
"""Writes a tuner trace (format: runtime/include/ncclbpf/trace.h) whose cost tables are what
NCCL 2.28.9's cost model computes for one documented topology. See README.md beside this file.

NOT a recording from hardware. The model is NCCL's own (v2.28.9-1 src/graph/tuning.cc:
ncclTunerConstantsDefaults, ncclTopoTuneModel, ncclTopoGetAlgoTime), re-implemented here from
reading it; the topology inputs NCCL would discover at run time (graph channel counts and
per-channel bandwidths) are assumptions stated below. NCCL computes in float, this script in
double, so cells may differ from NCCL's in the last digits.

usage: gen_model_trace.py > dgx-h100-8gpu.trace
"""
import math
import sys

# --- Topology assumptions: one DGX H100-class node ------------------------------------------
N_RANKS, N_NODES = 8, 1            # 8 H100 SXM GPUs, one node, NVLink 4 through NVSwitch
COMPCAP_IDX = 2                    # Hopper (minCompCap = maxCompCap = 90)
GRAPH = {                          # per algorithm: (nChannels, bwIntra GB/s per channel)
    "tree": (16, 20.0), "ring": (16, 20.0), "nvls": (16, 20.0),
}
COMM_ID = 0x6e63636c62706630      # any value; identical on all ranks in a real job
PID = 4242

# --- NCCL 2.28.9 constants (ncclTunerConstantsDefaults) ---------------------------------------
TREE, RING, CNDIRECT, CNCHAIN, NVLS, NVLSTREE, PAT = range(7)
LL, LL128, SIMPLE = range(3)
BCAST, REDUCE, AG, RS, AR = range(5)
BASE_LAT = [[6.8, 14.0, 8.4], [6.6, 14.0, 8.4], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0],
            [8.0, 8.0, 8.0]]
HW_LAT_NVLINK = [[.6, 1.25, 4.0], [.6, 1.9, 3.4], [0, 0, 3.7], [0, 0, 2.8], [0, 0, 25],
                 [0, 0, 25], [0, 0, 4.0]]
LL_MAX_BW = 141.0                  # llMaxBws[Hopper][1 node]
PER_CH_MAX_TREE_BW = 38.7          # perChMaxTreeBws[Hopper][1 node]
PER_CH_MAX_RING_LL128_BW = 36.7    # perChMaxRingLL128Bws[Hopper][1 node]
PER_CH_MAX_TREE_LL128_BW = 36.7    # perChMaxTreeLL128Bws[Hopper][1 node]
NVLS_EFFICIENCY = 0.85             # nvlsEfficiency[Hopper]
TREE_CORRECTION = [
    [1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0,
     1.0, 1.0],
    [1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9,
     1.0, 1.0],
    [.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9],
]


def model():
    """bandwidth[coll][algo][proto] (GB/s, 0 = unavailable) and latency (us), one node."""
    ppn = N_RANKS / N_NODES
    bw = [[[0.0] * 3 for _ in range(7)] for _ in range(5)]
    lat = [[[0.0] * 3 for _ in range(7)] for _ in range(5)]
    graph = {TREE: GRAPH["tree"], RING: GRAPH["ring"], NVLS: GRAPH["nvls"]}
    for coll in range(5):
        nsteps = 2 * (N_RANKS - 1) if coll == AR else (N_RANKS - 1 if coll in (AG, RS) else N_RANKS)
        for a in range(7):
            if coll in (BCAST, REDUCE) and a != RING:
                continue
            if coll in (AG, RS) and a not in (PAT, RING, NVLS, CNDIRECT):
                continue
            if coll == AR and a == PAT:
                continue
            # Disabled on this topology: CollNet (no CollNet plugin: collnetEnable 0), NVLS_TREE
            # (single node), PAT (needs one GPU per node).
            if a in (CNDIRECT, CNCHAIN, NVLSTREE, PAT):
                continue
            n_ch, bw_intra = graph[a]
            for p in range(3):
                if a == NVLS and p != SIMPLE:
                    continue
                b = bw_intra
                if a == NVLS:
                    intra = bw_intra * NVLS_EFFICIENCY * (n_ch - 1) / n_ch
                    intra *= 2.0 if coll == AR else (ppn - 1) / ppn
                    b = min(intra, bw_intra)  # bwInter = bwIntra on one node (assumption)
                bus = n_ch * b
                if a == RING and p == LL:
                    bus = min(LL_MAX_BW, bus * .5)
                if a == RING and p == LL128:
                    bus = min(bus * 0.92, n_ch * PER_CH_MAX_RING_LL128_BW)
                if a == TREE and coll == AR:
                    bus = min(bus * .92, n_ch * PER_CH_MAX_TREE_BW)
                if a == TREE and p == LL:
                    bus = min(bus * 1.0 / 3.8, LL_MAX_BW)
                if a == TREE and p == LL128:
                    bus = min(bus * 7.0 / 9.0, n_ch * PER_CH_MAX_TREE_LL128_BW)
                if not (a != RING and coll in (AG, RS)):
                    bus *= (N_RANKS / nsteps) if a in (RING, NVLS, NVLSTREE) else .5
                bw[coll][a][p] = bus
                l = BASE_LAT[a][p]
                intra_lat = HW_LAT_NVLINK[a][p]
                if a == RING:
                    if coll in (REDUCE, BCAST):
                        l += intra_lat  # sameChannels assumed
                    else:
                        l += nsteps * intra_lat
                elif a == TREE:
                    if coll == AR:
                        l += 2 * ((N_RANKS // N_NODES - 1) * intra_lat)
                elif a == NVLS:
                    l = intra_lat
                lat[coll][a][p] = l
    return bw, lat


def log2_down(n):
    return n.bit_length() - 1 if n > 0 else -1


def cost_table(bw, lat, coll, nbytes):
    t = []
    for a in range(7):
        for p in range(3):
            b = bw[coll][a][p]
            if b == 0:
                t.append(-1.0)
                continue
            log_size = log2_down(nbytes >> 6)
            if a == TREE and coll == AR and 0 <= log_size < 23:
                b *= TREE_CORRECTION[p][log_size]
            t.append(lat[coll][a][p] * 1 + nbytes / (1000 * b))
    return t


def winner(t):
    best = None
    for i, v in enumerate(t):
        if 0 <= v < 3.6e9 and (best is None or v < t[best]):
            best = i
    return (-1, -1) if best is None else (best // 3, best % 3)


def main():
    bw, lat = model()
    out = sys.stdout
    out.write("# ncclbpf trace v1\n")
    out.write("# Cost tables from NCCL 2.28.9's cost model (src/graph/tuning.cc) for 8 H100 SXM\n")
    out.write("# GPUs on one node (NVLink 4 + NVSwitch, ring/tree/NVLS graphs of 16 channels at\n")
    out.write("# 20 GB/s assumed). Generated by gen_model_trace.py, NOT recorded on hardware;\n")
    out.write("# algo/proto = the cell NCCL's model picks (no plugin), ch 0 = NCCL's channel count.\n")
    ctx = 0

    def emit_init(c, comm):
        out.write(f"init c={PID}.{c} comm={comm:016x} ranks={N_RANKS} nodes={N_NODES} api=5\n")

    def emit_call(c, seq, coll, nbytes):
        t = cost_table(bw, lat, coll, nbytes)
        a, p = winner(t)
        cost = ",".join("%.9g" % v for v in t)
        out.write(f"call c={PID}.{c} seq={seq} coll={coll} bytes={nbytes} pipe=1 reg=0 "
                  f"table=7x3 cost={cost} algo={a} proto={p} ch=0 ver=0\n")

    # Part 1, communicator 0: an nccl-tests style sweep, 8 B to 1 GiB (x4 steps), every
    # collective the tuner sees. AllGather/ReduceScatter sizes are the full buffer (NCCL
    # passes count x nRanks).
    emit_init(0, COMM_ID)
    seq = 0
    for coll in (AR, AG, RS, BCAST, REDUCE):
        n = 8
        while n <= 1 << 30:
            emit_call(0, seq, coll, n)
            seq += 1
            n *= 4
    out.write(f"fini c={PID}.0\n")

    # Part 2, communicator 1: three steps of a data-parallel training loop with FSDP-style
    # sharding of a ~1.3B-parameter model in bf16 over 8 ranks: per layer group an AllGather of
    # the parameters (forward and backward) and a ReduceScatter of the gradients, plus the
    # small AllReduces of loss and grad-norm.
    emit_init(1, COMM_ID + 1)
    seq = 0
    layer_bytes = [50331648, 50331648, 50331648, 50331648, 100663296, 25165824]
    for step in range(3):
        for lb in layer_bytes:               # forward
            emit_call(1, seq, AG, lb); seq += 1
        for lb in reversed(layer_bytes):     # backward
            emit_call(1, seq, AG, lb); seq += 1
            emit_call(1, seq, RS, lb); seq += 1
        emit_call(1, seq, AR, 4); seq += 1   # loss
        emit_call(1, seq, AR, 8); seq += 1   # grad norm
    out.write(f"fini c={PID}.1\n")


if __name__ == "__main__":
    main()
