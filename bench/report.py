#!/usr/bin/env python3
"""Summarise a `make bench` run (bench/all.sh) into report.md, a TPS-vs-threads plot, and docs.

Usage: report.py OUT_DIR [--docs docs/benchmarks.md]

Reads what bench/all.sh's steps left in OUT_DIR (sysbench-<ps>/latest.{tsv,md},
commit-pipeline.tsv, linkbench-<n>/linkbench.*.json and linkbench.cpu.tsv, fsync.tsv,
machine.txt), takes medians over the repetitions, checks issue 12's targets point by point, and
writes OUT_DIR/report.md and OUT_DIR/tps-vs-threads.png (when matplotlib is importable). With
--docs, the report replaces what lies between the "make bench" markers of that file.
"""
import argparse
import csv
import datetime
import glob
import json
import os
import re
import statistics
import sys

BEGIN = "<!-- make bench: begin (bench/report.py writes this part) -->"
END = "<!-- make bench: end -->"


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, f="{:,.0f}"):
    return f.format(v) if v is not None else "-"


def tsv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def sysbench(out):
    """{ps: {(server, workload, threads): {qps, tps, cpu, p99}}} of medians, and RSS lines per ps."""
    res, rss = {}, {}
    for d in sorted(glob.glob(os.path.join(out, "sysbench-*"))):
        ps = os.path.basename(d).split("-", 1)[1]
        rows = tsv(os.path.join(d, "latest.tsv"))
        p99col = next((k for k in (rows[0].keys() if rows else []) if re.match(r"p\d+_ms", k)), "p99_ms")
        acc = {}
        for r in rows:
            key = (r["server"], r["workload"], int(r["threads"]))
            a = acc.setdefault(key, {"qps": [], "tps": [], "cpu": [], "p99": [], "fail": 0})
            if r["status"] != "ok":
                a["fail"] += 1
            a["qps"].append(num(r["qps"]))
            a["tps"].append(num(r["tps"]))
            a["cpu"].append(num(r["cpu_us_per_query"]))
            a["p99"].append(num(r[p99col]))
        res[ps] = {k: {m: (med(v) if m != "fail" else v) for m, v in a.items()} for k, a in acc.items()}
        md = os.path.join(d, "latest.md")
        if os.path.exists(md):
            with open(md) as fh:
                text = fh.read()
            rss[ps] = [l for l in text.splitlines() if re.match(r"\| (kiln|mariadb)\S* \| [\d.]+ \|", l)]
    return res, rss


def pipeline(out):
    acc = {}
    for r in tsv(os.path.join(out, "commit-pipeline.tsv")):
        key = (r["server"], r["workload"], int(r["threads"]))
        a = acc.setdefault(key, {k: [] for k in ("tps", "p99", "fpc", "group", "cpu")})
        a["tps"].append(num(r["tps"]))
        a["p99"].append(num(r["p99_ms"]))
        a["fpc"].append(num(r["fsyncs_per_commit"]))
        a["group"].append(num(r["group_size"]))
        a["cpu"].append(num(r["cpu_us_per_tx"]))
    return {k: {m: med(v) for m, v in a.items()} for k, a in acc.items()}


def linkbench(out):
    """Per server: lists (one entry per run) of load rows/s, ops/s, CPU us per row and per op."""
    res = {}
    for d in sorted(glob.glob(os.path.join(out, "linkbench-*"))):
        cpu = {r["server"]: r for r in tsv(os.path.join(d, "linkbench.cpu.tsv"))}
        for f in glob.glob(os.path.join(d, "linkbench.*.load.json")):
            s = os.path.basename(f).split(".")[1]
            try:
                with open(f) as fh:
                    load = json.load(fh).get("load") or {}
                with open(os.path.join(d, f"linkbench.{s}.requests.json")) as fh:
                    req = json.load(fh).get("request") or {}
            except (OSError, ValueError):
                continue
            rows = sum(t["rows"] for t in load.get("tables", []))
            secs = sum(t["seconds"] for t in load.get("tables", []))
            a = res.setdefault(s, {k: [] for k in ("rows_s", "ops_s", "cpu_row", "cpu_op", "errors")})
            a["rows_s"].append(rows / secs if secs else None)
            a["ops_s"].append(req.get("ops_per_sec"))
            a["errors"].append(req.get("errors"))
            c = cpu.get(s, {})
            lc, rc = num(c.get("load_cpu_s")), num(c.get("request_cpu_s"))
            a["cpu_row"].append(lc * 1e6 / rows if lc is not None and rows else None)
            a["cpu_op"].append(rc * 1e6 / req["ops"] if rc is not None and req.get("ops") else None)
    return res


def plot(sb, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    panels = sorted({(ps, w) for ps, r in sb.items() for (_, w, _) in r}, key=lambda x: (x[1], x[0]))
    if not panels:
        return None
    cols = 2
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(11, 3.2 * rows), squeeze=False)
    for ax, (ps, w) in zip(axes.flat, panels):
        r = sb[ps]
        for s in sorted({k[0] for k in r}):
            pts = sorted((t, v["tps"]) for (srv, wl, t), v in r.items() if srv == s and wl == w and v["tps"])
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=s)
        ax.set_xscale("log", base=2)
        ts = sorted({t for (srv, wl, t) in r if wl == w})
        ax.set_xticks(ts)
        ax.set_xticklabels([str(t) for t in ts])
        ax.minorticks_off()
        ax.set_title(f"{w}, --db-ps-mode={ps}", fontsize=10)
        ax.set_xlabel("threads")
        ax.set_ylabel("TPS")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--docs")
    args = ap.parse_args()
    out = args.out
    sb, rss = sysbench(out)
    pipe = pipeline(out)
    lb = linkbench(out)
    L = []
    w = L.append
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    w(f"### make bench, {now}")
    w("")
    machine = open(os.path.join(out, "machine.txt")).read().split("\n") if os.path.exists(
        os.path.join(out, "machine.txt")) else ["?", "?", "?"]
    knobs = ""
    if os.path.exists(os.path.join(out, "command.txt")):
        knobs = open(os.path.join(out, "command.txt")).read().strip()
    w(f"Reproduce: `{knobs + ' ' if knobs else ''}make bench` (bench/all.sh, then bench/report.py). {machine[1]} cores, kernel {machine[2]}, "
      f"load average at the start {' '.join(machine[0].split()[:3])}; MariaDB 10.11 with "
      "bench/mariadb-primary.cnf (durable: sync_binlog=1, innodb_flush_log_at_trx_commit=1), Kiln durable. "
      "Medians over the repetitions; each point alternates the two servers.")
    fs = tsv(os.path.join(out, "fsync.tsv"))
    if fs:
        w("")
        w("fsync (4 KiB O_DSYNC writes, one thread): " + "; ".join(
            f"{r['when']} {fmt(num(r['syncs_per_s']))}/s"
            + (f" ({1000 / num(r['syncs_per_s']):.2f} ms)" if num(r['syncs_per_s']) else "") for r in fs) + ".")
    # Target 1.
    t1 = []
    for ps, r in sorted(sb.items()):
        for (s, wl, t), k in sorted(r.items()):
            if s != "kiln" or ("mariadb", wl, t) not in r:
                continue
            m = r[("mariadb", wl, t)]
            cr, qr = ratio(k["cpu"], m["cpu"]), ratio(k["qps"], m["qps"])
            t1.append((ps, wl, t, cr, qr, k["p99"], m["p99"],
                       cr is not None and cr <= 1.2, qr is not None and qr >= 1.0,
                       k["p99"] is not None and m["p99"] is not None and k["p99"] <= m["p99"]))
    t2 = []
    for (s, wl, t), k in sorted(pipe.items()):
        if s == "mariadb" or ("mariadb", wl, t) not in pipe:
            continue
        m = pipe[("mariadb", wl, t)]
        t2.append((wl, t, k, m, k["group"] is not None and m["group"] is not None and k["group"] >= m["group"],
                   k["fpc"] is not None and m["fpc"] is not None and k["fpc"] <= m["fpc"] / 2,
                   (ratio(k["tps"], m["tps"]) or 0) >= 1.3))
    w("")
    w("Issue 12's targets in this run:")
    if t1:
        n = len(t1)
        w(f"- Target 1 (sysbench, Kiln/MariaDB): CPU per query <= 1.2x at {sum(x[7] for x in t1)} of {n} points, "
          f"QPS >= 1.0x at {sum(x[8] for x in t1)} of {n}, p99 <= MariaDB's at {sum(x[9] for x in t1)} of {n}; "
          f"all three at {sum(x[7] and x[8] and x[9] for x in t1)} of {n}.")
    if t2:
        w(f"- Target 2 (durable group commit at 16/64 threads): commits per group >= MariaDB's at "
          f"{sum(x[4] for x in t2)} of {len(t2)} points, fsyncs per commit <= half of MariaDB's at "
          f"{sum(x[5] for x in t2)} of {len(t2)}, TPS >= 1.3x at {sum(x[6] for x in t2)} of {len(t2)}.")
    if "kiln" in lb and "mariadb" in lb:
        k, m = lb["kiln"], lb["mariadb"]
        w(f"- Target 3 (LinkBench, medians of {len(k['rows_s'])} runs): load {fmt(ratio(med(k['rows_s']), med(m['rows_s'])), '{:.2f}')}x "
          f"MariaDB's rows/s, requests {fmt(ratio(med(k['ops_s']), med(m['ops_s'])), '{:.2f}')}x its ops/s; server CPU "
          f"{fmt(ratio(med(k['cpu_row']), med(m['cpu_row'])), '{:.2f}')}x per loaded row and "
          f"{fmt(ratio(med(k['cpu_op']), med(m['cpu_op'])), '{:.2f}')}x per request (target: >= 1.0x and <= 1.0x).")
    yes = lambda b: "yes" if b else "**no**"
    for ps, r in sorted(sb.items()):
        w("")
        w(f"#### sysbench, --db-ps-mode={ps}")
        w("")
        w("| workload | threads | MariaDB QPS | Kiln QPS | QPS ratio | MariaDB CPU us/q | Kiln CPU us/q | CPU ratio | "
          "MariaDB p99 ms | Kiln p99 ms | target 1 met |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for x in [x for x in t1 if x[0] == ps]:
            _, wl, t, cr, qr, kp, mp = x[:7]
            k, m = r[("kiln", wl, t)], r[("mariadb", wl, t)]
            fails = k["fail"] + m["fail"]
            w(f"| {wl} | {t} | {fmt(m['qps'])} | {fmt(k['qps'])} | {fmt(qr, '{:.2f}')} | {fmt(m['cpu'], '{:.1f}')} | "
              f"{fmt(k['cpu'], '{:.1f}')} | {fmt(cr, '{:.2f}')} | {fmt(mp, '{:.2f}')} | {fmt(kp, '{:.2f}')} | "
              f"{'yes' if x[7] and x[8] and x[9] else 'no'}{f' ({fails} runs failed)' if fails else ''} |")
        if rss.get(ps):
            w("")
            w("RSS (MB) after loading / with the connections open: " + "; ".join(
                " ".join(c.strip() for c in l.strip("|").split("|")) for l in rss[ps]) + ".")
    if t2:
        w("")
        w("#### Group commit, durable (bench/commit-pipeline.sh)")
        w("")
        w("| workload | threads | MariaDB TPS | Kiln TPS | TPS ratio | MariaDB p99 ms | Kiln p99 ms | MariaDB commits/group | "
          "Kiln commits/group | MariaDB fsyncs/commit | Kiln fsyncs/commit | MariaDB CPU us/tx | Kiln CPU us/tx |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for wl, t, k, m, *_ in t2:
            w(f"| {wl} | {t} | {fmt(m['tps'])} | {fmt(k['tps'])} | {fmt(ratio(k['tps'], m['tps']), '{:.2f}')} | "
              f"{fmt(m['p99'], '{:.2f}')} | {fmt(k['p99'], '{:.2f}')} | {fmt(m['group'], '{:.2f}')} | {fmt(k['group'], '{:.2f}')} | "
              f"{fmt(m['fpc'], '{:.3f}')} | {fmt(k['fpc'], '{:.3f}')} | {fmt(m['cpu'], '{:.1f}')} | {fmt(k['cpu'], '{:.1f}')} |")
    if lb:
        w("")
        w("#### LinkBench (bench/linkbench-compare.sh, JDBC mode)")
        w("")
        w("| server | runs | load rows/s | requests ops/s | server CPU us per loaded row | server CPU us per request | failed ops |")
        w("|---|---:|---:|---:|---:|---:|---:|")
        for s in sorted(lb):
            a = lb[s]
            w(f"| {s} | {len(a['rows_s'])} | {fmt(med(a['rows_s']))} | {fmt(med(a['ops_s']))} | "
              f"{fmt(med(a['cpu_row']), '{:.1f}')} | {fmt(med(a['cpu_op']), '{:.1f}')} | "
              f"{sum(e or 0 for e in a['errors'])} |")
    png = os.path.join(out, "tps-vs-threads.png")
    plotted = plot(sb, png)
    if plotted:
        rel = os.path.relpath(png, os.path.dirname(os.path.abspath(args.docs)) if args.docs else out)
        w("")
        w(f"![TPS against threads, Kiln and MariaDB]({rel})")
    elif plotted is False:
        w("")
        w("(No plot: matplotlib is not installed; `apt-get install -y python3-matplotlib`.)")
    text = "\n".join(L) + "\n"
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write(text)
    print(text)
    if args.docs:
        with open(args.docs) as fh:
            doc = fh.read()
        if BEGIN not in doc or END not in doc:
            print(f"report.py: {args.docs} has no make-bench markers; not edited", file=sys.stderr)
            return 1
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(args.docs, "w") as fh:
            fh.write(head + BEGIN + "\n" + text + END + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
