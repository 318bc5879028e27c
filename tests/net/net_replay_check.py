#!/usr/bin/env python3
"""Checks `ncclbpf replay --json` of a trace's net records against the trace itself.
  net_replay_check.py TRACE REPLAY.json counters|allow|deny
Every op's events equal the trace's records of that op; the programs of the policy ran once per
event of their ops. counters (policies/net_counters.c): net_peers holds, per peer address and
device, exactly the completions' counts, bytes, timed counts, summed and largest durations the
trace's complete/complete_recv records add up to. allow/deny (net_allow.c, tests' deny.c) on a
trace recorded with net_allow: every connect/accept result compared, none (allow) or all (deny)
differing. A trace with tuner call records too: every call replayed, and the net programs'
maps under "net_maps" (the plugin's under "maps")."""
import collections
import json
import sys

trace, replay, policy = sys.argv[1], sys.argv[2], sys.argv[3]
recs = []
for line in open(trace):
    if line.startswith("net "):
        recs.append(dict(tok.split("=", 1) for tok in line.split()[1:]))
doc = json.load(open(replay))
errors = []


def check(what, got, want):
    if got != want:
        errors.append("%s: replay says %r, the trace %r" % (what, got, want))


ops = {o["op"]: o for o in doc["net"]["ops"]}
events = collections.Counter(r["op"] for r in recs)
check("net events", doc["net"]["events"], len(recs))
progs = {"counters": ("complete", "complete_recv"), "allow": ("connect", "accept"),
         "deny": ("connect", "accept")}[policy]
for op in ("connect", "accept", "isend", "irecv", "complete", "complete_recv"):
    check(op + " events", ops[op]["events"], events[op])
    check(op + " runs", ops[op]["runs"], events[op] if op in progs else 0)
if policy in ("allow", "deny"):
    for op in progs:
        with_ret = sum(1 for r in recs if r["op"] == op and r["ret"] != "-")
        check(op + " compared", ops[op]["compared"], with_ret)
        check(op + " differ", ops[op]["differ"], 0 if policy == "allow" else with_ret)
        if not with_ret:
            errors.append("%s: no recorded result to compare" % op)
else:
    want = {}
    for r in recs:
        if not r["op"].startswith("complete"):
            continue
        a = bytes.fromhex(r["addr"])
        key = (tuple(int.from_bytes(a[4 * i:4 * i + 4], "little") for i in range(4)),
               int(r["dev"]))
        s = want.setdefault(key, collections.Counter())
        side = "send" if r["op"] == "complete" else "recv"
        d = int(r["dur"])
        s[side + "s"] += 1
        s[side + "_bytes"] += int(r["bytes"])
        if d:
            s[side + "_timed"] += 1
            s[side + "_ns"] += d
            s[side + "_max_ns"] = max(s[side + "_max_ns"], d)
    got = {}
    calls = sum(1 for line in open(trace) if line.startswith("call "))
    check("tuner calls", doc["calls"], calls)
    if calls and ("net_maps" not in doc or "maps" not in doc):
        errors.append("a mixed trace's replay lacks net_maps or maps: %s" % sorted(doc))
    for m in doc["net_maps" if calls else "maps"]:
        if m["map"]["name"] != "net_peers":
            continue
        for e in m["elements"]:
            got[(tuple(e["key"]["addr"]), e["key"]["dev"])] = e["value"]
    check("net_peers keys", sorted(got), sorted(want))
    for key, s in want.items():
        for field in ("sends", "send_bytes", "send_ns", "send_max_ns", "recvs", "recv_bytes",
                      "recv_ns", "recv_max_ns", "send_timed", "recv_timed"):
            if key in got:
                check("net_peers %s %s" % (key, field), got[key][field], s[field])
    if not want:
        errors.append("no completions in the trace")
for e in errors[:20]:
    print("FAIL:", e)
if errors:
    sys.exit(1)
print("net replay: %d events checked against the trace" % len(recs))
