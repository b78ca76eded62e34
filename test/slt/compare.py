#!/usr/bin/python3
"""Compare an sltrun result with the floor and MariaDB's baseline.

usage: compare.py RESULT.json FLOOR.json BASELINE.json OUT.md

Writes a markdown table (one row per folder: records, Kiln passed, MariaDB
passed, Kiln as % of MariaDB, floor) to OUT.md and prints it. Exits 1 if a
folder of the floor is below its floor (or missing from the result).
"""
import json
import sys


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    res, floor, base = (json.load(open(p)) for p in sys.argv[1:4])
    rf, ff, bf = res["folders"], floor["folders"], base["folders"]
    names = sorted(set(rf) | set(ff))
    lines = [
        "| folder | records | Kiln passed | MariaDB passed | Kiln / MariaDB | floor | |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    bad = []
    tot = {"records": 0, "kiln": 0, "maria": 0}
    for n in names:
        r = rf.get(n)
        kp = r["passed"] if r else None
        rec = r["records"] if r else (bf.get(n, {}).get("records"))
        mp = bf.get(n, {}).get("passed")
        fl = ff.get(n)
        ok = True
        if fl is not None and (kp is None or kp < fl):
            ok = False
            bad.append(n)
        pct = "%.2f%%" % (100.0 * kp / mp) if kp is not None and mp else "-"
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            n, rec if rec is not None else "-", kp if kp is not None else "missing",
            mp if mp is not None else "-", pct, fl if fl is not None else "-",
            "" if ok else "**below floor**"))
        tot["records"] += rec or 0
        tot["kiln"] += kp or 0
        tot["maria"] += mp or 0
    pct = "%.2f%%" % (100.0 * tot["kiln"] / tot["maria"]) if tot["maria"] else "-"
    lines.append("| **total** | %d | %d | %d | %s | | |" % (tot["records"], tot["kiln"], tot["maria"], pct))
    lines.append("")
    lines.append("Server under test: %s, %s s (parallel %s). Baseline: %s." % (
        res.get("server_version"), res.get("seconds"), res.get("parallel"), base.get("server_version")))
    text = "\n".join(lines) + "\n"
    open(sys.argv[4], "w").write(text)
    print(text)
    if bad:
        print("below the floor: " + ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
