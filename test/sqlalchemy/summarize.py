#!/usr/bin/python3
"""Count a pytest JUnit XML report of SQLAlchemy's dialect suite.

usage: summarize.py KILN.xml [--maria MARIA.xml] [--floor FLOOR.json] [--out DIR]

Each test case is counted once: failed if it has a <failure>, else error if
it has an <error> (setup/teardown, e.g. a fixture's CREATE TEMPORARY TABLE),
else skipped if <skipped>, else passed. Prints the counts (and MariaDB's,
given its report), the most common failure messages on Kiln, and the tests
MariaDB passes and Kiln does not; writes counts.json, categories.txt and
kiln-only-failures.txt to DIR. Exits 1 if Kiln's passed count is below the
floor's "passed".
"""
import argparse
import collections
import json
import os
import re
import sys
import xml.etree.ElementTree as ET


def load(path):
    """Returns {test id: (outcome, message)} for a JUnit XML report."""
    out = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        # Class names carry the server version (..._mysql+pymysql_8_0_40...):
        # strip it so Kiln's and MariaDB's ids compare.
        cls = re.sub(r"_(mysql|mariadb)\+\w+?_[0-9_]+[0-9a-z_]*$", "", tc.get("classname", ""))
        tid = "%s::%s" % (cls, tc.get("name"))
        kinds = {c.tag: c for c in tc}
        for tag, outcome in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
            if tag in kinds:
                msg = (kinds[tag].get("message") or "").strip().splitlines()
                out[tid] = (outcome, msg[0][:160] if msg else "")
                break
        else:
            out[tid] = ("passed", "")
    return out


def counts(res):
    c = collections.Counter(o for o, _ in res.values())
    return {k: c.get(k, 0) for k in ("passed", "failed", "error", "skipped")} | {"total": len(res)}


def category(msg):
    # Group messages by their MySQL error code and text, without the SQL.
    m = re.search(r"\((\d{4}), ['\"]([^'\"]{0,70})", msg)
    if m:
        return "%s %s" % (m.group(1), m.group(2))
    return msg[:90]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("--maria")
    ap.add_argument("--floor")
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    kiln = load(a.kiln)
    result = {"kiln": counts(kiln)}
    maria = load(a.maria) if a.maria else None
    if maria is not None:
        result["mariadb"] = counts(maria)
    for name, c in result.items():
        print("%-8s passed %5d  failed %4d  errors %4d  skipped %4d  (of %d)" % (
            name, c["passed"], c["failed"], c["error"], c["skipped"], c["total"]))
    cats = collections.Counter(category(m) for o, m in kiln.values() if o in ("failed", "error"))
    lines = ["%5d  %s" % (n, c) for c, n in cats.most_common()]
    print("most common Kiln failures:")
    print("\n".join(lines[:10]))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "categories.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    if maria is not None:
        only = sorted(t for t, (o, _) in kiln.items()
                      if o in ("failed", "error") and maria.get(t, ("",))[0] == "passed")
        with open(os.path.join(a.out, "kiln-only-failures.txt"), "w") as f:
            f.write("".join("%s\t%s\n" % (t, kiln[t][1]) for t in only))
        print("%d tests pass on MariaDB and fail on Kiln (kiln-only-failures.txt)" % len(only))
    with open(os.path.join(a.out, "counts.json"), "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    if a.floor:
        floor = json.load(open(a.floor))["passed"]
        got = result["kiln"]["passed"]
        if got < floor:
            print("Kiln passed %d tests, below the floor of %d (%s)" % (got, floor, a.floor))
            return 1
        print("Kiln passed %d tests; floor %d" % (got, floor))
    return 0


if __name__ == "__main__":
    sys.exit(main())
