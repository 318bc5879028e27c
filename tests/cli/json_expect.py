#!/usr/bin/env python3
"""json_expect.py FILE|- EXPR...

Parses the JSON document in FILE (- for stdin), then evaluates each EXPR, a Python expression
over the document `d`, and fails naming every EXPR that is false. The CLI tests check --json
output with it: a document that does not parse fails too."""
import json
import sys


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    text = sys.stdin.read() if sys.argv[1] == "-" else open(sys.argv[1]).read()
    try:
        d = json.loads(text)
    except ValueError as e:
        print(f"not JSON ({e}): {text[:400]}")
        return 1
    bad = 0
    for expr in sys.argv[2:]:
        try:
            ok = eval(expr, {"d": d})
        except Exception as e:  # a missing key is a failed expectation, not a crash
            print(f"error in {expr}: {e!r}")
            ok = False
        if not ok:
            print(f"false: {expr}")
            bad += 1
    if bad:
        print(f"in: {text[:2000]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
