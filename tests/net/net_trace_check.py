#!/usr/bin/env python3
"""Checks the net records a recording run (NCCLBPF_TRACE) of a net test wrote, against what the
run itself must have done: per process, every posted send and receive completed once (as many
complete/complete_recv records as isend/irecv ones, the sends' bytes summed equal), connections
were set up (connect and accept records), and the records' ret= says whether a program ran for
their op (the policy's ops given as arguments; completions never carry a return value).
usage: net_trace_check.py TRACE [OP_WITH_PROGRAM...]"""
import collections
import sys

trace, with_prog = sys.argv[1], set(sys.argv[2:])
per_pid = collections.defaultdict(lambda: collections.Counter())
nbytes = collections.defaultdict(lambda: collections.Counter())
errors = []
n = 0
for line in open(trace):
    if not line.startswith("net "):
        continue
    n += 1
    f = dict(tok.split("=", 1) for tok in line.split()[1:])
    pid, op = f["c"].split(".")[0], f["op"]
    per_pid[pid][op] += 1
    nbytes[pid][op] += int(f["bytes"])
    ran = f["ret"] != "-"
    want = op in with_prog and not op.startswith("complete")
    if ran != want:
        errors.append("%s: ret=%s, expected %s" % (line.strip(), f["ret"],
                                                   "a value" if want else "-"))
    if int(f["t"]) == 0:
        errors.append("%s: no time" % line.strip())
if not per_pid:
    errors.append("no net records in %s" % trace)
for pid, c in per_pid.items():
    for post, done in (("isend", "complete"), ("irecv", "complete_recv")):
        if c[post] == 0 or c[post] != c[done]:
            errors.append("pid %s: %d %s records, %d %s" % (pid, c[post], post, c[done], done))
    if nbytes[pid]["isend"] != nbytes[pid]["complete"]:
        errors.append("pid %s: sent %d bytes, completed %d" % (pid, nbytes[pid]["isend"],
                                                              nbytes[pid]["complete"]))
    if not c["connect"] or not c["accept"]:
        errors.append("pid %s: no connect/accept records: %s" % (pid, dict(c)))
for e in errors[:20]:
    print("FAIL:", e)
if errors:
    sys.exit(1)
print("net trace: %d records from %d processes checked" % (n, len(per_pid)))
