#!/usr/bin/env python3
"""A stand-in for ncclbpf-gpubench on machines without a GPU, for tests/gpubench/gpu_scripts.sh:
the same options (the ones the scripts use) and the same CSV (docs/tuning.md), times from a
made-up but deterministic cost model (+/- 1 % noise) in which NCCL's default is not the best
everywhere. Policy runs ask the real policy: `ncclbpf test-run` (FAKE_NCCLBPF) on the object's
tuner program (FAKE_PROG, default tuned_table; objects named noop.o, size_aware.o or
profiler_latency.o decide nothing here) gives the configuration per collective and size.
FAKE_SLEEP=S makes every run take S seconds longer; FAKE_FAIL=TEXT makes runs whose configuration
label contains TEXT fail after writing half of their rows (as a rank failure or --timeout leaves
them). With NCCL_DEBUG=INFO and TUNING in NCCL_DEBUG_SUBSYS it prints NCCL's line per collective
("AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}"); FAKE_OTHER=TEXT makes runs
whose --plugin path contains TEXT pick another protocol (a plugin that decides otherwise)."""
import argparse
import os
import random
import subprocess
import sys
import time

ALGOS = ["tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"]
PROTOS = ["ll", "ll128", "simple"]
OPS = ["allreduce", "allgather", "reducescatter", "broadcast"]
COLL_ID = {"allreduce": 4, "allgather": 2, "reducescatter": 3, "broadcast": 0}
HEADER = ("coll,bytes,count,type,ranks,inplace,config,iters,reps,time_us_mean,time_us_min,"
          "time_us_max,time_us_sd,algbw_gbs,busbw_gbs,busbw_min_gbs,busbw_max_gbs,algo,proto,"
          "channels,wrong")


def size(s):
    m = {"k": 10, "m": 20, "g": 30}
    s = s.lower().rstrip("b")
    return int(s[:-1]) << m[s[-1]] if s[-1] in m else int(s)


def nccl_default(coll, b):
    proto = "ll" if b <= 16384 else "ll128" if b <= 1 << 20 else "simple"
    return "ring", proto, 2


def model(coll, ranks, b, algo, proto, ch):
    lat = {"ll": 5.0, "ll128": 8.0, "simple": 12.0}[proto] * (1 + 0.1 * ranks)
    bw = {"ll": 1.0, "ll128": 3.0, "simple": 4.0}[proto] * min(ch, 8) ** 0.7 * 1000
    if algo == "tree":
        lat *= 0.8
        bw *= 0.7
    f = 2.0 * (ranks - 1) / ranks if coll == "allreduce" else (ranks - 1) / ranks
    return lat + b * f / bw


def counts(op, b, n, ts=4):
    elems = b // ts
    split = op in ("allgather", "reducescatter")
    if split:
        elems = elems // n * n
    if elems == 0:
        elems = n if split else 1
    return elems * ts


def policy_decision(obj, coll, ranks, b):
    if os.path.basename(obj) in ("noop.o", "size_aware.o", "profiler_latency.o"):
        return None
    out = subprocess.run([os.environ["FAKE_NCCLBPF"], "test-run", obj, "--prog",
                          os.environ.get("FAKE_PROG", "tuned_table"), "--quiet", "--ctx",
                          f"coll_type={COLL_ID[coll]},n_bytes={b},n_ranks={ranks}"],
                         capture_output=True, text=True, check=True).stdout
    v = {ln.split()[0]: int(ln.split()[2]) for ln in out.splitlines()
         if ln.strip().startswith(("algorithm", "protocol", "n_channels"))}
    return v["algorithm"], v["protocol"], v["n_channels"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=2)
    ap.add_argument("-o", default="allreduce")
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="64M")
    ap.add_argument("-f", type=int, default=2)
    ap.add_argument("-i", type=int, default=20)
    ap.add_argument("-w", type=int, default=5)
    ap.add_argument("-r", type=int, default=1)
    ap.add_argument("--target-ms", type=int, default=0)
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--no-plugin", action="store_true")
    ap.add_argument("--plugin")
    ap.add_argument("--policy")
    ap.add_argument("--algo")
    ap.add_argument("--proto")
    ap.add_argument("--channels", type=int, default=0)
    ap.add_argument("--csv")
    ap.add_argument("--timeout", type=int, default=0)
    a = ap.parse_args()
    ops = OPS if a.o == "all" else a.o.split(",")
    forced = a.algo or a.proto or a.channels
    label = "default"
    if forced:
        label = f"{a.algo or '-'}/{a.proto or '-'}/{a.channels or '-'}"
    if a.policy:
        label = f"policy:{os.path.basename(a.policy)}" + (f"+{label}" if forced else "")
    rnd = random.Random(f"{label}{os.getpid()}")
    rows = []
    for op in ops:
        b = size(a.b)
        while b <= size(a.e):
            s = counts(op, b, a.n)
            algo, proto, ch = nccl_default(op, s)
            algo, proto = a.algo or algo, a.proto or proto
            ch = a.channels or ch
            extra = 0.0
            if a.policy:
                d = policy_decision(a.policy, op, a.n, s)
                extra = 0.05
                if d:
                    algo = ALGOS[d[0]] if d[0] >= 0 else algo
                    proto = PROTOS[d[1]] if d[1] >= 0 else proto
                    ch = d[2] if d[2] > 0 else ch
            if os.environ.get("FAKE_OTHER") and os.environ["FAKE_OTHER"] in (a.plugin or ""):
                proto = PROTOS[(PROTOS.index(proto) + 1) % len(PROTOS)]
            if (os.environ.get("NCCL_DEBUG") == "INFO" and
                    "TUNING" in os.environ.get("NCCL_DEBUG_SUBSYS", "")):
                name = {"allreduce": "AllReduce", "allgather": "AllGather",
                        "reducescatter": "ReduceScatter", "broadcast": "Broadcast"}[op]
                print(f"fake:1:1 [0] NCCL INFO {name}: {s} Bytes -> Algo {algo.upper()} proto "
                      f"{proto.upper()} channel{{Lo..Hi}}={{0..{ch - 1}}}")
            t = (model(op, a.n, s, algo, proto, ch) + extra) * (1 + rnd.uniform(-0.01, 0.01))
            f = 2.0 * (a.n - 1) / a.n if op == "allreduce" else (a.n - 1) / a.n
            bw = s / t / 1e3
            rows.append(f"{op},{s},{s // 4},float,{a.n},0,{label},{a.i},{a.r},{t:.3f},{t:.3f},"
                        f"{t:.3f},0.000,{bw:.4f},{bw * f:.4f},{bw * f:.4f},{bw * f:.4f},"
                        f"{algo},{proto},{ch},0")
            b *= a.f
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
    fail = os.environ.get("FAKE_FAIL") and os.environ["FAKE_FAIL"] in label
    if fail:
        rows = rows[: len(rows) // 2]
    if a.csv:
        with open(a.csv, "w") as out:
            out.write(HEADER + "\n" + "".join(r + "\n" for r in rows))
    print("# fake gpubench:", label, len(rows), "rows")
    if fail:
        print("gpubench: rank 1 failed (exit 2); ending the others", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
