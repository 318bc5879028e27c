#!/usr/bin/env python3
"""NCCL Inspector vs NCCLbpf's built-in telemetry, from the runs scripts/gpu-inspector.sh made
(python3 standard library only).

RUNS holds one folder per run, CONFIG.REP (CONFIG: none, inspector, ncclbpf), each with out.txt
(all_reduce_perf's table), and for inspector the JSON files Inspector wrote (*.log, one object
per line with "header" and "coll_perf"), for ncclbpf our JSON lines (*.jsonl).

  report RUNS [--tolerance 0.05] [--min-us 20]

Prints markdown:
- per message size, each plugin's median GPU execution time of every collective it recorded
  (all ranks) over all_reduce_perf's own time for that size in the same run, the median of
  that over the repetitions, and ours over Inspector's: like is compared with like, since two
  runs' GPU times differ (with ranks sharing a GPU, a kernel waits for its peer's, so the hosts'
  timing shows in the GPU's); both use Inspector's definition (the longest channel: our
  channel_max_us); sizes whose median time is at least --min-us (Inspector reports whole
  microseconds) must agree within --tolerance. Our whole-kernel span (exec_time_us) is shown too;
- per message size, the added cost per collective: all_reduce_perf's out-of-place time with the
  plugin minus without it, paired within each repetition (runs are interleaved), for Inspector
  and for ours, and ours minus Inspector's with its standard error.
Exit status: 0 when the figures agree and our added cost is not above Inspector's (the mean of
ours minus Inspector's is at most two standard errors above 0), 1 otherwise, 2 on bad input.
"""
import argparse
import glob
import json
import math
import os
import re
import statistics
import sys
from collections import defaultdict

CONFIGS = ("none", "inspector", "ncclbpf")


class ReportError(Exception):
    pass


def perf_table(path):
    """all_reduce_perf's rows: {size: out-of-place time in us}."""
    rows = {}
    with open(path, errors="replace") as f:
        for line in f:
            p = line.split()
            # size count type redop root time algbw busbw #wrong time algbw busbw #wrong
            if len(p) >= 13 and p[0].isdigit() and p[1].isdigit():
                try:
                    rows[int(p[0])] = float(p[5])
                except ValueError:
                    continue
    if not rows:
        raise ReportError(f"{path}: no all_reduce_perf result rows")
    return rows


def json_lines(pattern):
    for path in sorted(glob.glob(pattern, recursive=True)):
        with open(path, errors="replace") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except ValueError as e:
                    raise ReportError(f"{path}:{n}: not JSON: {e}")


def inspector_records(run):
    for o in json_lines(os.path.join(run, "**", "*.log")):
        c = o.get("coll_perf") if isinstance(o, dict) else None
        if c and c.get("coll") == "AllReduce":
            us = c["coll_exec_time_us"]
            yield c["coll_msg_size_bytes"], us, us


def ncclbpf_records(run):
    for o in json_lines(os.path.join(run, "**", "*.jsonl")):
        if o.get("coll") == "AllReduce":
            yield o["msg_size_bytes"], o.get("channel_max_us", o["exec_time_us"]), o["exec_time_us"]


def runs_of(root):
    runs = defaultdict(dict)  # config -> rep -> path
    for d in sorted(os.listdir(root)):
        m = re.fullmatch(r"(\w+)\.(\d+)", d)
        if m and m.group(1) in CONFIGS and os.path.isdir(os.path.join(root, d)):
            runs[m.group(1)][int(m.group(2))] = os.path.join(root, d)
    for c in CONFIGS:
        if not runs[c]:
            raise ReportError(f"{root}: no {c}.N run folders")
    return runs


def size_str(b):
    for unit, k in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << k and b % (1 << k) == 0:
            return f"{b >> k} {unit}"
    return f"{b} B"


def figures(runs, reader):
    """{rep: {size: ([time us], [span us])}} of every AllReduce a plugin recorded."""
    out = {}
    for rep, path in runs.items():
        by_size = defaultdict(lambda: ([], []))
        for size, us, span in reader(path):
            by_size[int(size)][0].append(float(us))
            by_size[int(size)][1].append(float(span))
        out[rep] = by_size
    return out


def pooled(fig, size, k):
    return [x for by_size in fig.values() for x in by_size.get(size, ([], []))[k]]


def mean_se(xs):
    m = statistics.fmean(xs)
    se = statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else float("inf")
    return m, se


def report(root, tol, min_us, out):
    runs = runs_of(root)
    tables = {c: {r: perf_table(os.path.join(p, "out.txt")) for r, p in runs[c].items()}
              for c in CONFIGS}
    ok = True
    insp = figures(runs["inspector"], inspector_records)
    ours = figures(runs["ncclbpf"], ncclbpf_records)
    for name, fig in (("Inspector", insp), ("ncclbpf", ours)):
        if not any(fig.values()):
            raise ReportError(f"{root}: no AllReduce records from {name}")

    def rel(cfg, fig, size):
        """Median over repetitions of (median recorded time / all_reduce_perf's time)."""
        q = [statistics.median(by_size[size][0]) / tables[cfg][r][size]
             for r, by_size in fig.items() if by_size.get(size) and size in tables[cfg][r]
             and tables[cfg][r][size] > 0]
        return statistics.median(q) if q else None

    out.write("## Per-collective figures, each against all_reduce_perf in its own run\n\n")
    out.write("| size | Inspector n | ncclbpf n | Inspector us | ncclbpf us | ncclbpf span us | "
              "Inspector / a_r_p | ncclbpf / a_r_p | ratio | verdict |\n")
    out.write("|---|---|---|---|---|---|---|---|---|---|\n")
    compared = 0
    sizes = sorted({s for f in (insp, ours) for by_size in f.values() for s in by_size})
    for size in sizes:
        ti, to, sp = pooled(insp, size, 0), pooled(ours, size, 0), pooled(ours, size, 1)
        qi, qo = rel("inspector", insp, size), rel("ncclbpf", ours, size)
        if not ti or not to or qi is None or qo is None:
            out.write(f"| {size_str(size)} | {len(ti)} | {len(to)} | | | | | | | "
                      "not in both plugins' records and all_reduce_perf's table |\n")
            continue
        iu, ou = statistics.median(ti), statistics.median(to)
        ratio = qo / qi
        if iu < min_us:
            verdict = f"not compared (< {min_us:g} us)"
        elif abs(ratio - 1) <= tol:
            verdict = "ok"
            compared += 1
        else:
            verdict = f"FAIL (> {tol:.0%})"
            compared += 1
            ok = False
        out.write(f"| {size_str(size)} | {len(ti)} | {len(to)} | {iu:.1f} | {ou:.1f} | "
                  f"{statistics.median(sp):.1f} | {qi:.3f} | {qo:.3f} | {ratio:.3f} | "
                  f"{verdict} |\n")
    if not compared:
        out.write("\nFAIL: no size long enough to compare\n")
        ok = False

    out.write("\n## Added cost per collective (all_reduce_perf out-of-place time minus the "
              "run without a plugin, same repetition)\n\n")
    out.write("| size | none us | Inspector +us | ncclbpf +us | ncclbpf - Inspector us |\n")
    out.write("|---|---|---|---|---|\n")
    reps = sorted(set.intersection(*(set(tables[c]) for c in CONFIGS)))
    if not reps:
        raise ReportError(f"{root}: no repetition has all of {', '.join(CONFIGS)}")
    common = sorted(set.intersection(*(set(tables[c][r]) for c in CONFIGS for r in reps)))
    diffs = []
    for size in common:
        base = [tables["none"][r][size] for r in reps]
        di = [tables["inspector"][r][size] - tables["none"][r][size] for r in reps]
        do = [tables["ncclbpf"][r][size] - tables["none"][r][size] for r in reps]
        d = [o - i for o, i in zip(do, di)]
        diffs += d
        m, se = mean_se(d)
        out.write(f"| {size_str(size)} | {statistics.fmean(base):.2f} | "
                  f"{statistics.fmean(di):+.2f} | {statistics.fmean(do):+.2f} | "
                  f"{m:+.2f} ± {se:.2f} |\n")
    m, se = mean_se(diffs)
    cost_ok = m <= 2 * se
    ok = ok and cost_ok
    out.write(f"\nncclbpf minus Inspector, all sizes and {len(reps)} repetition(s): "
              f"{m:+.3f} ± {se:.3f} us per collective: "
              f"{'ok (not above Inspector)' if cost_ok else 'FAIL (above Inspector)'}\n")
    out.write(f"\nverdict: {'PASS' if ok else 'FAIL'}\n")
    return 0 if ok else 1


def main(argv):
    ap = argparse.ArgumentParser(prog="gpu_inspector_report",
                                 description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("report")
    r.add_argument("runs")
    r.add_argument("--tolerance", type=float, default=0.05)
    r.add_argument("--min-us", type=float, default=20.0)
    a = ap.parse_args(argv)
    try:
        return report(a.runs, a.tolerance, a.min_us, sys.stdout)
    except (ReportError, OSError, KeyError, TypeError) as e:
        print(f"gpu_inspector_report: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
