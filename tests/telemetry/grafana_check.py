#!/usr/bin/env python3
"""Checks a Grafana dashboard (share/grafana/*.json) the way Grafana's import needs it, and
against what the plugin really exports.

usage: grafana_check.py DASHBOARD.json SAMPLE_PROGRAM [ARG...]

- Grafana's dashboard model: title, uid (<= 40 of [A-Za-z0-9_-]), integer schemaVersion,
  time, templating.list, panels; __inputs naming the data source for "Import dashboard";
  panels with unique integer ids, a known type, a gridPos inside the 24-column grid that
  overlaps no other panel, a Prometheus data source, targets with unique refIds and an expr;
  variables of a known type, every $variable an expression uses defined (or Grafana's own).
- The expressions: brackets and quotes balanced; every ncclbpf_* metric is a family the
  plugin exports (SAMPLE_PROGRAM with its ARGs prints its Prometheus text; histogram suffixes allowed); every
  label in by(...), without(...) and {matchers} is one of the labels its samples carry (or le).
Before checking the dashboard, the checker checks itself: each rule broken once in a copy of
the dashboard must be refused. Prints OK, or the problems, exit 1.
"""
import copy
import json
import re
import subprocess
import sys

PANEL_TYPES = {"timeseries", "stat", "piechart", "table", "bargauge", "gauge", "heatmap",
               "text", "row", "barchart", "histogram", "state-timeline"}
VAR_TYPES = {"query", "datasource", "custom", "constant", "interval", "textbox"}
BUILTIN_VARS = {"__rate_interval", "__range", "__interval", "__all", "__name", "__range_s",
                "__interval_ms", "__dashboard", "__from", "__to", "__user", "__org"}
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and",
                "or", "unless", "offset"}


def exported(sample_cmd):
    text = subprocess.run(sample_cmd, check=True, capture_output=True, text=True).stdout
    families, labels = {}, {"le"}
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)$", line)
        if m:
            families[m.group(1)] = m.group(2)
        elif line and not line.startswith("#"):
            labels.update(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', line.split("} ")[0]))
    names = set()
    for f, t in families.items():
        names.add(f)
        if t in ("histogram", "summary"):
            names.update(f + s for s in ("_bucket", "_sum", "_count"))
    if not names:
        raise SystemExit("grafana_check: the sample program printed no families")
    return names, labels


def balanced(expr):
    stack, pairs, quote = [], {")": "(", "]": "[", "}": "{"}, None
    for i, ch in enumerate(expr):
        if quote:
            if ch == "\\":
                continue
            if ch == quote and expr[i - 1] != "\\":
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            stack.append(ch)
        elif ch in ")]}":
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack and quote is None


def expr_problems(where, expr, names, labels, variables):
    out = []
    if not balanced(expr):
        out.append(f"{where}: unbalanced brackets or quotes: {expr}")
    for v in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", expr):
        if v not in variables and v not in BUILTIN_VARS:
            out.append(f"{where}: undefined variable ${v}")
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    for m in re.findall(r"\bncclbpf_[a-z0-9_]+", bare):
        if m not in names:
            out.append(f"{where}: metric {m} is not exported")
    groups = re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", bare)
    groups += re.findall(r"\{([^}]*)\}", bare)
    for g in groups:
        for lab in re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=|,|$)", g.strip()):
            if lab not in labels and lab not in PROMQL_WORDS:
                out.append(f"{where}: label {lab} is not exported")
    return out


def problems(d, names, labels):
    out = []
    for k, t in (("title", str), ("uid", str), ("schemaVersion", int), ("panels", list),
                 ("time", dict), ("templating", dict)):
        if not isinstance(d.get(k), t) or isinstance(d.get(k), bool):
            out.append(f"dashboard: {k} missing or not {t.__name__}")
    if out:
        return out
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", d["uid"]):
        out.append(f"dashboard: bad uid {d['uid']!r}")
    if not {"from", "to"} <= set(d["time"]):
        out.append("dashboard: time needs from and to")
    inputs = {i.get("name") for i in d.get("__inputs", []) if i.get("type") == "datasource"
              and i.get("pluginId") == "prometheus"}
    if not inputs:
        out.append("dashboard: no Prometheus data source in __inputs")
    variables = {}
    for v in d["templating"].get("list", []):
        if v.get("type") not in VAR_TYPES or not v.get("name"):
            out.append(f"variable {v.get('name')}: bad type {v.get('type')}")
        variables[v.get("name")] = v
    for v in variables.values():
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") == "query":
            out += expr_problems(f"variable {v['name']}", q or "", names, labels, variables)
        if v.get("type") == "datasource":
            cur = v.get("current", {}).get("value", "")
            for ref in re.findall(r"\$\{([A-Za-z_0-9]+)\}", cur):
                if ref not in inputs:
                    out.append(f"variable {v['name']}: ${{{ref}}} is not an input")
    ids, cells = set(), {}
    for p in d["panels"]:
        where = f"panel {p.get('id')} {p.get('title')!r}"
        if not isinstance(p.get("id"), int) or p["id"] in ids:
            out.append(f"{where}: id missing or not unique")
        ids.add(p.get("id"))
        if p.get("type") not in PANEL_TYPES:
            out.append(f"{where}: unknown type {p.get('type')}")
        if not p.get("title"):
            out.append(f"{where}: no title")
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) and g[k] >= 0 for k in "hwxy") or \
                not (1 <= g.get("w", 0) and g["x"] + g["w"] <= 24 and g.get("h", 0) >= 1):
            out.append(f"{where}: bad gridPos {g}")
            continue
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                if (x, y) in cells:
                    out.append(f"{where}: overlaps panel {cells[(x, y)]}")
                    break
                cells[(x, y)] = p["id"]
            else:
                continue
            break
        if p.get("type") in ("row", "text"):
            continue
        ds = p.get("datasource", {})
        if ds.get("type") != "prometheus" or ds.get("uid", "").lstrip("${").rstrip("}") \
                not in variables:
            out.append(f"{where}: data source {ds} is not the dashboard's Prometheus variable")
        refs = [t.get("refId") for t in p.get("targets", [])]
        if not refs or len(set(refs)) != len(refs) or None in refs:
            out.append(f"{where}: targets missing or refIds not unique")
        for t in p.get("targets", []):
            out += expr_problems(f"{where} {t.get('refId')}", t.get("expr", ""), names, labels,
                                 variables)
            if not t.get("expr"):
                out.append(f"{where} {t.get('refId')}: no expr")
    return out


def self_check(d, names, labels):
    """Each rule broken once must be refused."""
    def broken(fn):
        c = copy.deepcopy(d)
        fn(c)
        return c
    p0 = lambda c: c["panels"][0]
    t0 = lambda c: p0(c)["targets"][0]
    cases = {
        "unknown metric": lambda c: t0(c).update(expr=t0(c)["expr"].replace(
            "ncclbpf_coll_bus_bytes_total", "ncclbpf_coll_bus_byte_total")),
        "unknown label": lambda c: t0(c).update(expr=t0(c)["expr"].replace("coll, size",
                                                                            "coll, sz")),
        "unbalanced": lambda c: t0(c).update(expr=t0(c)["expr"] + ")"),
        "undefined variable": lambda c: t0(c).update(expr=t0(c)["expr"].replace("$node",
                                                                                "$host")),
        "duplicate id": lambda c: c["panels"][1].update(id=p0(c)["id"]),
        "overlap": lambda c: c["panels"][1].update(gridPos=dict(p0(c)["gridPos"])),
        "off the grid": lambda c: p0(c)["gridPos"].update(x=20),
        "unknown type": lambda c: p0(c).update(type="graphx"),
        "no uid": lambda c: c.pop("uid"),
        "no input": lambda c: c.update(__inputs=[]),
        "duplicate refId": lambda c: p0(c)["targets"].append(dict(t0(c))),
    }
    bad = []
    for what, fn in cases.items():
        c = broken(fn)
        if c == d or not problems(c, names, labels):
            bad.append(f"self-check: a dashboard with {what} was accepted")
    return bad


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        d = json.load(f)
    names, labels = exported(argv[2:])
    out = self_check(d, names, labels) + problems(d, names, labels)
    for line in out:
        print(line)
    if out:
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
