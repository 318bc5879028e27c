#!/usr/bin/env python3
"""ncclbpf-gpubench CSVs -> merged sweep and markdown tables (python3 standard library only).

The CSV format is documented once, in docs/tuning.md ("The CSV"). Files are grouped into
repetitions by a path component `repN` (gpu-compare.sh and gpu-overhead.sh write
OUT/repN/NAME.csv); files outside such a folder are repetition 0. A (collective, ranks, bytes,
config) measured more than once in one repetition is averaged there.

  merge -o OUT.csv IN.csv...        concatenate complete rows under one header (what
                                    `ncclbpf tune` reads); incomplete or malformed lines are
                                    dropped and counted on stderr
  oracle SWEEP.csv                  per rank count and forced configuration that is the fastest
                                    (error-free) somewhere: "RANKS CONFIG COLLS MINBYTES MAXBYTES"
  compare --sweep SWEEP.csv --policy LABEL [--decisions CSV] RUN.csv...
                                    markdown: policy vs NCCL's default ("default") and vs the
                                    sweep's per-size oracle configuration, re-measured in RUN.csv
  overhead [--baseline LABEL] RUN.csv...
                                    markdown: every other configuration minus the baseline
                                    (default: "default", i.e. no plugin), per size
"""
import argparse
import csv
import math
import re
import sys
from collections import defaultdict

COLUMNS = ("coll,bytes,count,type,ranks,inplace,config,iters,reps,time_us_mean,time_us_min,"
           "time_us_max,time_us_sd,algbw_gbs,busbw_gbs,busbw_min_gbs,busbw_max_gbs,algo,proto,"
           "channels,wrong").split(",")
COLLS = ("allreduce", "allgather", "reducescatter", "broadcast", "reduce")


class ReportError(Exception):
    pass


def rep_of(path):
    m = None
    for part in path.split("/"):
        m = re.fullmatch(r"rep(\d+)", part) or m
    return int(m.group(1)) if m else 0


def valid(row):
    """The row as a dict when it is a complete, well-formed measurement, else None."""
    if len(row) != len(COLUMNS):
        return None
    r = dict(zip(COLUMNS, row))
    try:
        if r["coll"] not in COLLS or int(r["bytes"]) <= 0 or int(r["ranks"]) < 1:
            return None
        t = float(r["time_us_mean"])
        if not (t > 0 and math.isfinite(t)) or int(r["wrong"]) < 0 or not r["config"]:
            return None
        float(r["time_us_sd"])
    except ValueError:
        return None
    return r


def read_rows(path, bad=None):
    """Rows of one gpubench CSV; raises ReportError without the documented header."""
    with open(path, newline="") as f:
        lines = [ln for ln in f.read().split("\n")]
    header_seen = False
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.rstrip("\r").split(",")
        if fields == COLUMNS:
            header_seen = True
            continue
        if not header_seen:
            raise ReportError(f"{path}:{i}: no ncclbpf-gpubench CSV header before data")
        r = valid(fields)
        if r is None:
            if bad is not None:
                bad.append(f"{path}:{i}")
            continue
        out.append(r)
    if not header_seen:
        raise ReportError(f"{path}: no ncclbpf-gpubench CSV header (empty file?)")
    return out


def cmd_merge(a):
    bad, n, skipped = [], 0, []
    with open(a.output, "w", newline="") as out:
        out.write(",".join(COLUMNS) + "\n")
        for p in a.files:
            try:
                rows = read_rows(p, bad)
            except (OSError, ReportError) as e:
                skipped.append(str(e))
                continue
            for r in rows:
                out.write(",".join(r[c] for c in COLUMNS) + "\n")
                n += 1
    for s in skipped:
        print(f"merge: skipped {s}", file=sys.stderr)
    if bad:
        print(f"merge: dropped {len(bad)} incomplete/malformed line(s): {' '.join(bad[:5])}",
              file=sys.stderr)
    print(f"merge: {n} rows from {len(a.files) - len(skipped)} file(s) -> {a.output}",
          file=sys.stderr)
    return 0 if n else 1


def collect(files):
    """{(coll, ranks, bytes, config): {rep: [time_us_mean...]}} and the decision strings."""
    data = defaultdict(lambda: defaultdict(list))
    used = {}
    for p in files:
        rep = rep_of(p)
        for r in read_rows(p):
            key = (r["coll"], int(r["ranks"]), int(r["bytes"]), r["config"])
            if int(r["wrong"]):
                continue
            data[key][rep].append(float(r["time_us_mean"]))
            used[key] = f"{r['algo']}/{r['proto']}/{r['channels']}"
    return data, used


def per_rep(reps):
    return {k: sum(v) / len(v) for k, v in reps.items()}


def stats(vals):
    n = len(vals)
    m = sum(vals) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in vals) / (n - 1)) if n > 1 else 0.0
    return m, sd, min(vals), max(vals)


def human(b):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def fmt_t(vals):
    if not vals:
        return "-"
    m, sd, _, _ = stats(vals)
    return f"{m:.2f} ± {sd:.2f}"


def ratio(num, den):
    """Paired per repetition: 'mean [min–max] (n)'; unpaired: ratio of the means."""
    a, b = per_rep(num), per_rep(den)
    common = sorted(set(a) & set(b))
    if common:
        rs = [a[k] / b[k] for k in common]
        m, _, lo, hi = stats(rs)
        return f"{m:.3f} [{lo:.3f}–{hi:.3f}] ({len(rs)})", m
    if a and b:
        m = (sum(a.values()) / len(a)) / (sum(b.values()) / len(b))
        return f"{m:.3f} (unpaired)", m
    return "-", None


def diff(num, den):
    a, b = per_rep(num), per_rep(den)
    common = sorted(set(a) & set(b))
    if not common:
        return "-", "-"
    ds = [a[k] - b[k] for k in common]
    m, sd, lo, hi = stats(ds)
    base = sum(b[k] for k in common) / len(common)
    return (f"{m:+.2f} ± {sd:.2f} [{lo:+.2f}…{hi:+.2f}] ({len(ds)})",
            f"{100 * m / base:+.1f}%" if base > 0 else "-")


def oracle_of(sweep_files):
    """{(coll, ranks, bytes): (config, time)}: the fastest error-free configuration."""
    data, _ = collect(sweep_files)
    best = {}
    for (coll, ranks, b, cfg), reps in data.items():
        if not (cfg == "default" or cfg.count("/") == 2) or cfg.startswith(("policy:", "env:")):
            continue
        t = sum(sum(v) for v in reps.values()) / sum(len(v) for v in reps.values())
        k = (coll, ranks, b)
        if k not in best or t < best[k][1] or (t == best[k][1] and cfg < best[k][0]):
            best[k] = (cfg, t)
    return best


def cmd_oracle(a):
    best = oracle_of([a.sweep])
    groups = defaultdict(lambda: [set(), None, None])
    for (coll, ranks, b), (cfg, _) in best.items():
        if cfg == "default":
            continue
        g = groups[(ranks, cfg)]
        g[0].add(coll)
        g[1] = b if g[1] is None else min(g[1], b)
        g[2] = b if g[2] is None else max(g[2], b)
    for (ranks, cfg), (colls, lo, hi) in sorted(groups.items()):
        print(ranks, cfg, ",".join(c for c in COLLS if c in colls), lo, hi)
    return 0


def cmd_compare(a):
    data, used = collect(a.files)
    best = oracle_of([a.sweep])
    dec = {}
    if a.decisions:
        _, dec = collect([a.decisions])
    keys = sorted({k[:3] for k in data if k[3] == a.policy}, key=lambda k: (COLLS.index(k[0]), k[1], k[2]))
    if not keys:
        raise ReportError(f"no rows with config '{a.policy}'")
    print(f"### `{a.policy}` vs NCCL's default and the sweep's oracle\n")
    print("Times: mean ± sd over repetitions (us per operation). Ratios: per repetition "
          "(interleaved runs), mean [min–max] (repetitions); < 1 is faster.\n")
    print("| coll | ranks | size | default us | policy us | policy used | oracle config | "
          "oracle us | policy/default | policy/oracle |")
    print("|---|---:|---:|---:|---:|---|---|---:|---:|---:|")
    geo = defaultdict(list)
    for coll, ranks, b in keys:
        pol = data[(coll, ranks, b, a.policy)]
        dfl = data.get((coll, ranks, b, "default"), {})
        ocfg = best.get((coll, ranks, b), ("-", None))[0]
        orc = data.get((coll, ranks, b, ocfg), {}) if ocfg != "-" else {}
        rd, md = ratio(pol, dfl)
        ro, mo = ratio(pol, orc)
        u = dec.get((coll, ranks, b, a.policy), used.get((coll, ranks, b, a.policy), "-"))
        flat = lambda d: [x for v in per_rep(d).values() for x in [v]]
        print(f"| {coll} | {ranks} | {human(b)} | {fmt_t(flat(dfl))} | {fmt_t(flat(pol))} | {u} "
              f"| {ocfg} | {fmt_t(flat(orc))} | {rd} | {ro} |")
        if md:
            geo[(coll, ranks, "default")].append(md)
        if mo:
            geo[(coll, ranks, "oracle")].append(mo)
    print("\n| coll | ranks | geomean policy/default | geomean policy/oracle | sizes |")
    print("|---|---:|---:|---:|---:|")
    for coll, ranks in sorted({(k[0], k[1]) for k in geo}, key=lambda k: (COLLS.index(k[0]), k[1])):
        g = lambda v: f"{math.exp(sum(map(math.log, v)) / len(v)):.3f}" if v else "-"
        d, o = geo.get((coll, ranks, "default"), []), geo.get((coll, ranks, "oracle"), [])
        print(f"| {coll} | {ranks} | {g(d)} | {g(o)} | {max(len(d), len(o))} |")
    return 0


def cmd_overhead(a):
    data, used = collect(a.files)
    cfgs = sorted({k[3] for k in data if k[3] != a.baseline})
    keys = sorted({k[:3] for k in data if k[3] == a.baseline}, key=lambda k: (COLLS.index(k[0]), k[1], k[2]))
    if not keys:
        raise ReportError(f"no rows with config '{a.baseline}'")
    print(f"### Plugin overhead: each configuration minus `{a.baseline}`\n")
    print("us per operation; differences paired per repetition (interleaved runs): "
          "mean ± sd [min…max] (repetitions), and relative to the baseline.\n")
    head = "| coll | ranks | size | baseline us |"
    sep = "|---|---:|---:|---:|"
    for c in cfgs:
        head += f" {c} − baseline | % | {c} used |"
        sep += "---:|---:|---|"
    print(head)
    print(sep)
    for coll, ranks, b in keys:
        base = data[(coll, ranks, b, a.baseline)]
        line = f"| {coll} | {ranks} | {human(b)} | {fmt_t(list(per_rep(base).values()))} |"
        for c in cfgs:
            d, pct = diff(data.get((coll, ranks, b, c), {}), base)
            line += f" {d} | {pct} | {used.get((coll, ranks, b, c), '-')} |"
        print(line)
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("merge")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("files", nargs="+")
    p = sub.add_parser("oracle")
    p.add_argument("sweep")
    p = sub.add_parser("compare")
    p.add_argument("--sweep", required=True)
    p.add_argument("--policy", required=True)
    p.add_argument("--decisions")
    p.add_argument("files", nargs="+")
    p = sub.add_parser("overhead")
    p.add_argument("--baseline", default="default")
    p.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    try:
        return {"merge": cmd_merge, "oracle": cmd_oracle, "compare": cmd_compare,
                "overhead": cmd_overhead}[a.cmd](a)
    except (OSError, ReportError) as e:
        print(f"gpubench_report: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
