#!/usr/bin/env python3
"""Checks for scripts/gpu-e2e.sh (standard library only; runs on the GPU host).

  gpu_e2e_check.py decisions NCCL_INFO_LOG TRACE_RANK0
      NCCL's own TUNING lines ("AllReduce: 1024 Bytes -> Algo TREE proto LL channel{Lo..Hi}=...")
      against the policy's decisions in rank 0's NCCLBPF_TRACE, call by call: wherever the
      policy chose an algorithm/protocol, NCCL must have used exactly that.
  gpu_e2e_check.py reload TRACE_DIR SEQ
      Every rank's trace switches from g=0 to g=1 at the same seq (SEQ, from `ncclbpf reload
      --job`), once, and never goes back.
  gpu_e2e_check.py split TRACE_DIR
      Ranks that belong to several communicators (scripts/gpu-split.sh): every rank's trace
      (TRACE_DIR/trace.rank*) is split by communicator (its init lines name them); every
      communicator must have made, on every rank that belongs to it, the same calls with the
      same decisions in the same order, every rank must belong to at least two communicators,
      and the decisions must vary (the policy explored, so equal streams mean something).
  gpu_e2e_check.py profiler DUMP_BEFORE DUMP_AFTER BENCH_CSV BYTES
      The profiler program's GPU latency (map `latency` of policies/profiler_latency.c, two
      `ncclbpf map dump` snapshots during a run at one size) against the time gpubench measured
      for that size: mean GPU time per collective must be positive and at most the measured
      time per collective (plus 10 %), and not below a quarter of it.
  gpu_e2e_check.py prom BEFORE_DIR AFTER_DIR BENCH_CSV BYTES NRANKS
      The Prometheus textfiles (NCCLBPF_PROM_DIR: one ncclbpf_<host>_<pid>.prom per rank) copied
      twice during the same run: every rank's file in both copies; between them, for the
      AllReduce series of BYTES' size bucket, the collectives counted must have grown, the bytes
      must be that count x BYTES exactly, the bus bytes x 2(n-1)/n, the histogram's +Inf bucket
      the count, the algorithm/protocol counts add up to it, and the mean GPU time per
      collective must hold against gpubench's time as for `profiler`.
Exit status 0 when the check holds; the reason otherwise.
"""
import csv
import json
import re
import sys

ALGOS = ["TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"]
PROTOS = ["LL", "LL128", "SIMPLE"]
COLL_ALLREDUCE = 4  # ncclFuncAllReduce in the tuner's collType


def trace_calls(path):
    calls = []
    with open(path) as f:
        for line in f:
            if not line.startswith("call "):
                continue
            kv = dict(re.findall(r"(\w+)=(\S+)", line))
            calls.append(kv)
    return calls


def check_decisions(log, trace):
    pat = re.compile(r"AllReduce: (\d+) Bytes -> Algo (\w+) proto (\w+)")
    used = []
    with open(log, errors="replace") as f:
        for line in f:
            m = pat.search(line)
            if m:
                used.append((int(m.group(1)), m.group(2).upper(), m.group(3).upper()))
    calls = [c for c in trace_calls(trace) if int(c["coll"]) == COLL_ALLREDUCE]
    if not used or not calls:
        return f"nothing to compare: {len(used)} NCCL TUNING lines, {len(calls)} traced calls"
    # The trace records the table's winner, which without a policy is NCCL's own choice: such
    # calls would agree with NCCL's log whatever the plugin does, so every call must have run
    # under a policy (ver= its version, 0 for none).
    unpoliced = sum(1 for c in calls if c.get("ver", "0") == "0")
    if unpoliced:
        return f"{unpoliced} of {len(calls)} traced calls ran without a policy (ver=0)"
    # NCCL logs one line per collective it tunes; the tuner is asked once per collective too.
    # Match in order by size.
    checked = mismatched = 0
    j = 0
    for nbytes, algo, proto in used:
        while j < len(calls) and int(calls[j]["bytes"]) != nbytes:
            j += 1
        if j == len(calls):
            break
        c = calls[j]
        j += 1
        a, p = int(c["algo"]), int(c["proto"])
        if a >= 0:
            checked += 1
            if ALGOS[a] != algo:
                mismatched += 1
                print(f"  {nbytes} B: policy algo {ALGOS[a]}, NCCL used {algo}")
        if p >= 0:
            if PROTOS[p] != proto:
                mismatched += 1
                print(f"  {nbytes} B: policy proto {PROTOS[p]}, NCCL used {proto}")
    print(f"decisions: {len(used)} NCCL TUNING lines, {checked} with a policy algorithm "
          f"compared, {mismatched} mismatches")
    if checked == 0:
        return "no call where the policy chose an algorithm"
    return "policy and NCCL disagree" if mismatched else None


def check_reload(tdir, seq):
    import glob
    seq = int(seq)
    files = sorted(glob.glob(f"{tdir}/trace.rank*"))
    files = [f for f in files if not f.endswith(".decisions")]
    if len(files) < 2:
        return f"need the traces of at least 2 ranks in {tdir}"
    firsts = {}
    for f in files:
        gens = [(int(c["seq"]), int(c.get("g", "-1"))) for c in trace_calls(f)]
        if not gens or gens[0][1] < 0:
            return f"{f}: no control-plane generation (g=) in the trace"
        switch = [s for (s, g), (_, g0) in zip(gens[1:], gens) if g != g0]
        if len(switch) != 1:
            return f"{f}: {len(switch)} generation changes (want 1)"
        bad = [s for s, g in gens if (g == 1) != (s >= switch[0])]
        if bad:
            return f"{f}: generation not monotone around {switch[0]}"
        firsts[f] = switch[0]
        print(f"  {f}: g=0 for seqs < {switch[0]}, g=1 from {switch[0]} "
              f"({len(gens)} calls, last seq {gens[-1][0]})")
    if len(set(firsts.values())) != 1:
        return f"ranks switched at different seqs: {firsts}"
    if list(firsts.values())[0] != seq:
        return f"ranks switched at {list(firsts.values())[0]}, reload reported {seq}"
    print(f"reload: all {len(files)} ranks switched at seq {seq}")
    return None


def dump_latency(path):
    """{(rank, coll, bucket): (count, total_ns)} from `ncclbpf map dump PID latency --json`
    (the raw bytes, key_hex/value_hex: the typed fields depend on the policy's BTF)."""
    out = {}
    with open(path) as f:
        d = json.load(f)
    le = lambda b, o, n: int.from_bytes(b[o:o + n], "little")
    for e in d.get("elements", []):
        k, v = bytes.fromhex(e["key_hex"]), bytes.fromhex(e["value_hex"])
        rank, coll, bucket = le(k, 8, 4), le(k, 12, 4), le(k, 16, 4)
        out[(rank, coll, bucket)] = (le(v, 0, 8), le(v, 8, 8))
    return out


def check_profiler(before, after, bench_csv, nbytes):
    a, b = dump_latency(before), dump_latency(after)
    nbytes = int(nbytes)
    bucket = nbytes.bit_length() - 1
    rows = [r for r in csv.DictReader(open(bench_csv)) if int(r["bytes"]) == nbytes]
    if not rows:
        return f"no gpubench row for {nbytes} B in {bench_csv}"
    measured = float(rows[0]["time_us_mean"])
    keys = [k for k in b if k[2] == bucket and k[1] == COLL_ALLREDUCE]
    if not keys:
        return f"no latency entry for bucket {bucket} in {after}"
    bad = None
    for k in keys:
        c0, t0 = a.get(k, (0, 0))
        c1, t1 = b[k]
        if c1 <= c0:
            bad = f"rank {k[0]}: no collectives between the two dumps"
            continue
        gpu = (t1 - t0) / (c1 - c0) / 1000.0
        ratio = gpu / measured
        print(f"  rank {k[0]}: {c1 - c0} collectives, profiler GPU time {gpu:.1f} us, "
              f"gpubench {measured:.1f} us per collective, ratio {ratio:.3f}")
        if not (0.25 <= ratio <= 1.10):
            bad = f"rank {k[0]}: profiler/measured ratio {ratio:.3f} outside [0.25, 1.10]"
    return bad


def prom_samples(path):
    """[(metric, {label: value}, float)] of a Prometheus text file."""
    out = []
    pat = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            m = pat.match(line.rstrip("\n"))
            if not m:
                raise ValueError(f"{path}: not a Prometheus sample: {line.strip()[:120]}")
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            out.append((m.group(1), labels, float(m.group(3))))
    return out


def prom_cell(samples, coll, size):
    """Totals of one (collective, size bucket) over the communicators of one process."""
    t = {"count": 0.0, "sum": 0.0, "bytes": 0.0, "bus": 0.0, "inf": 0.0, "algo_proto": 0.0,
         "comm_size": 0}
    names = {"ncclbpf_coll_exec_seconds_count": "count", "ncclbpf_coll_exec_seconds_sum": "sum",
             "ncclbpf_coll_bytes_total": "bytes", "ncclbpf_coll_bus_bytes_total": "bus",
             "ncclbpf_coll_algo_proto_total": "algo_proto"}
    for name, lab, v in samples:
        if lab.get("coll") != coll or lab.get("size") != str(size):
            continue
        if name in names:
            t[names[name]] += v
            t["comm_size"] = int(lab["comm_size"])
        elif name == "ncclbpf_coll_exec_seconds_bucket" and lab.get("le") == "+Inf":
            t["inf"] += v
    return t


def check_prom(before, after, bench_csv, nbytes, nranks):
    import glob
    import os
    nbytes, nranks = int(nbytes), int(nranks)
    bucket = 1 << (nbytes.bit_length() - 1)
    rows = [r for r in csv.DictReader(open(bench_csv)) if int(r["bytes"]) == nbytes]
    if not rows:
        return f"no gpubench row for {nbytes} B in {bench_csv}"
    measured = float(rows[0]["time_us_mean"])
    files = sorted(os.path.basename(f) for f in glob.glob(f"{after}/*.prom"))
    if len(files) != nranks:
        return f"{len(files)} textfiles in {after}, want one per rank ({nranks})"
    bad = None
    for name in files:
        if not os.path.exists(f"{before}/{name}"):
            bad = f"{name} is in the later copy only"
            continue
        a = prom_cell(prom_samples(f"{before}/{name}"), "AllReduce", bucket)
        b = prom_cell(prom_samples(f"{after}/{name}"), "AllReduce", bucket)
        n = b["count"] - a["count"]
        if n <= 0:
            bad = f"{name}: no AllReduce of {nbytes} B counted between the two copies"
            continue
        d = {k: b[k] - a[k] for k in ("sum", "bytes", "bus", "algo_proto")}
        factor = 2.0 * (b["comm_size"] - 1) / b["comm_size"]
        gpu = d["sum"] / n * 1e6
        ratio = gpu / measured
        print(f"  {name}: {n:.0f} collectives, {d['bytes']:.0f} bytes, {d['bus']:.0f} bus bytes "
              f"(comm size {b['comm_size']}), GPU time {gpu:.1f} us against gpubench's "
              f"{measured:.1f} us, ratio {ratio:.3f}")
        if d["bytes"] != n * nbytes:
            bad = f"{name}: {d['bytes']:.0f} bytes for {n:.0f} collectives of {nbytes} B"
        elif abs(d["bus"] - d["bytes"] * factor) > n:
            bad = f"{name}: bus bytes {d['bus']:.0f}, want {d['bytes'] * factor:.0f}"
        elif b["inf"] != b["count"] or b["algo_proto"] != b["count"]:
            bad = (f"{name}: count {b['count']:.0f}, +Inf bucket {b['inf']:.0f}, "
                   f"algorithm/protocol counts {b['algo_proto']:.0f} (must be equal)")
        elif not (0.25 <= ratio <= 1.10):
            bad = f"{name}: textfile/measured GPU time ratio {ratio:.3f} outside [0.25, 1.10]"
    return bad


def split_streams(path):
    """{communicator id: [(seq, coll, bytes, algo, proto, ch), ...]} of one rank's trace."""
    comm_of, streams = {}, {}
    with open(path) as f:
        for line in f:
            kv = dict(re.findall(r"(\w+)=(\S+)", line))
            if line.startswith("init "):
                comm_of[kv["c"]] = kv["comm"]
            elif line.startswith("call ") and kv.get("c") in comm_of:
                streams.setdefault(comm_of[kv["c"]], []).append(
                    tuple(kv[k] for k in ("seq", "coll", "bytes", "algo", "proto", "ch")))
    return streams


def check_split(tdir):
    import glob
    files = sorted(f for f in glob.glob(f"{tdir}/trace.rank*") if f[-1].isdigit())
    if len(files) < 2:
        return f"{len(files)} rank traces in {tdir}"
    by_comm = {}
    bad = None
    for f in files:
        s = split_streams(f)
        if len(s) < 2:
            bad = f"{f}: the rank belongs to {len(s)} communicator(s), not two or more"
        for comm, calls in s.items():
            by_comm.setdefault(comm, {})[f] = calls
    protos = set()
    for comm, ranks in sorted(by_comm.items()):
        ref_file, ref = next(iter(ranks.items()))
        for f, calls in ranks.items():
            if calls != ref:
                n = next((i for i, (a, b) in enumerate(zip(calls, ref)) if a != b),
                         min(len(calls), len(ref)))
                bad = (f"communicator {comm}: {f} differs from {ref_file} at call {n} "
                       f"({calls[n] if n < len(calls) else 'end'} vs "
                       f"{ref[n] if n < len(ref) else 'end'})")
        protos |= {c[4] for c in ref}
        print(f"  communicator {comm}: {len(ranks)} ranks, {len(ref)} calls each, "
              f"identical on all: {all(c == ref for c in ranks.values())}")
    if len(protos - {"-1"}) < 2:
        bad = bad or f"the decisions do not vary (protocols {sorted(protos)})"
    return bad


def main(argv):
    checks = {"decisions": (check_decisions, 2), "reload": (check_reload, 2),
              "profiler": (check_profiler, 4), "prom": (check_prom, 5), "split": (check_split, 1)}
    if len(argv) < 2 or argv[1] not in checks or len(argv) - 2 != checks[argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    why = checks[argv[1]][0](*argv[2:])
    if why:
        print(f"FAIL {argv[1]}: {why}")
        return 1
    print(f"OK {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
