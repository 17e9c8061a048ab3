#!/usr/bin/env python3
"""report_peers.py RAW JSON: bench.sh's section 12 (peers.sh) as a markdown
table - egret beside the control, the seed's container-wide design and
sandbox-runtime, each figure's median over rounds and its ratio to the
control's - and issue 42's targets with their verdicts, computed from this
run's figures only: section 12's, and those report.py put in JSON
(connect+close, BPF per connection, launch, egretd, pinning, bulk). Run
after report.py; adds "peers" to its JSON file. A target whose figures
this run lacks (BENCH_ONLY) has no row."""
import json
import statistics as st
import sys
from collections import defaultdict

raw, out = sys.argv[1], sys.argv[2]
VARIANTS = ["egret", "seed", "srt"]
NAMES = {"egret": "egret", "seed": "seed design (dnsmasq + ipset + iptables)",
         "srt": "sandbox-runtime (srt)"}
fig = defaultdict(dict)     # (row, key) -> {variant: {round: value}}
missing = {}                # variant -> why
for line in open(raw):
    f = line.split()
    if len(f) >= 6 and f[0] == "peer":
        row, v, r = f[1], f[2], f[3]
        for k, x in zip(f[4::2], f[5::2]):
            fig[(row, k)].setdefault(v, {})[r] = float(x)
    elif f and f[0] == "peer-missing":
        missing[f[1]] = " ".join(f[2:]) or "could not be set up"

if not fig:
    sys.exit(0)

# (row, key, what it says, lower is better)
ROWS = [
    ("http32", "rps", "requests/s, 32 concurrent connections, a new connection per request", False),
    ("http32", "cpu_ms_per_1k", "the machine's CPU per 1000 such requests (ms)", True),
    ("http1", "p50_us", "connect + GET + close, one at a time, p50 (µs)", True),
    ("start", "wall_ms", "start of a confined `true`, wall (ms)", True),
    ("bulk", "cpu_ms_per_gib", "bulk upload, the machine's CPU per GiB (ms)", True),
]


def med(row, key, v):
    xs = list(fig[(row, key)].get(v, {}).values())
    return st.median(xs) if xs else None


def ratio(row, key, v):
    c, x = med(row, key, "control"), med(row, key, v)
    return x / c if c and x is not None else None


def paired(row, key, v):
    """Median (min-max) over rounds of variant/control in the same round."""
    a, b = fig[(row, key)].get("control", {}), fig[(row, key)].get(v, {})
    rs = [b[r] / a[r] for r in a if r in b and a[r]]
    return (st.median(rs), min(rs), max(rs)) if rs else None


def num(x):
    return "%.0f" % x if abs(x) >= 100 else "%.3g" % x


res = {}
print("\n### Beside its peers (section 12: medians of %d interleaved rounds, ratio to the control)\n"
      % max((len(x) for d in fig.values() for x in d.values()), default=0))
print("| figure | control | " + " | ".join(NAMES[v] for v in VARIANTS) + " |")
print("|---|---|" + "---|" * len(VARIANTS))
for row, key, what, _ in ROWS:
    c = med(row, key, "control")
    cells = []
    for v in VARIANTS:
        if v in missing:
            cells.append("not built: " + missing[v][:60])
            continue
        x, q, p = med(row, key, v), ratio(row, key, v), paired(row, key, v)
        if x is None or q is None:
            cells.append("-")
            continue
        cell = "%s (**%.3f**" % (num(x), q)
        if p and row in ("http32", "http1"):
            cell += "; paired %.2f, %.2f-%.2f" % p
        cells.append(cell + ")")
        res.setdefault(v, {})["%s_%s" % (row, key)] = {"median": x, "ratio": q,
                                                     "paired": p}
    res.setdefault("control", {})["%s_%s" % (row, key)] = {"median": c}
    print("| %s | %s | %s |" % (what, num(c) if c is not None else "-", " | ".join(cells)))


def verdict(ok):
    return "**met**" if ok else "**missed**"


try:
    doc = json.load(open(out))
except (OSError, ValueError):
    doc = {}
meta = doc.get("meta", {})
N = int(meta.get("connects_per_round", 0))


def bpf_per_conn(v):
    """Every program's ns per connect+close of variant @v (stats on)."""
    d = doc.get("bpf_prog_ns_per_run", {}).get(v)
    if not d or not N:
        return None
    return sum(x["ns_per_run_total"] * x["runs"] / (x["rounds"] * N) for x in d.values())


def paired_conn(v):
    return doc.get("connect_us", {}).get(v, {}).get("paired_ratio_median")


rows = []
# The verdicts take the median of the per-round paired ratios: a round's
# two figures share that round's state of the machine, which the ratio of
# two medians over rounds does not.
q, p = ratio("http32", "rps", "egret"), paired("http32", "rps", "egret")
if p is not None:
    rows.append(("requests/s, 32 concurrent short connections",
                 "%.3f paired (%.2f-%.2f); %.3f of medians" % (p + (q,)), ">= 0.95", p[0] >= 0.95))
q, p = ratio("http32", "cpu_ms_per_1k", "egret"), paired("http32", "cpu_ms_per_1k", "egret")
if p is not None:
    rows.append(("CPU per request, 32 concurrent",
                 "%.3f paired (%.2f-%.2f); %.3f of medians" % (p + (q,)), "<= 1.05", p[0] <= 1.05))
xs = [paired_conn(v) for v in ("egret4", "egretdns4", "lo-egret")]
if all(x is not None for x in xs):
    rows.append(("connect+close paired, static / learned / loopback",
                 " / ".join("%.3f" % x for x in xs), "<= 1.05", max(xs) <= 1.05))
b = bpf_per_conn("bpf-static4")
if b is not None:
    rows.append(("BPF per connect+close, static entry (every program, stats on)",
                 "%.2f µs" % (b / 1000), "<= 1.0 µs", b <= 1000))
L = doc.get("launch", {})
c, e = L.get("true", {}).get("median"), L.get("egret", {}).get("median")
if c is None or e is None:
    c, e = med("start", "wall_ms", "control"), med("start", "wall_ms", "egret")
if c is not None and e is not None:
    rows.append(("`egret run -- true` above `true` alone, wall, the pinned set",
                 "+%.1f ms (%.1f against %.1f)" % (e - c, e, c), "<= +5 ms", e - c <= 5.0))
s = doc.get("egretd_seq_ms", {}).get("median")
if s is not None and c is not None:
    rows.append(("through egretd: caller start to COMMAND running, above `true` alone",
                 "+%.1f ms" % (s - c), "<= +10 ms", s - c <= 10.0))
allrun = [x["all_running_ms"] for x in doc.get("egretd_bursts", [])]
if allrun:
    rows.append(("100 at once through egretd, all running", "%d ms (worst of %d)" % (max(allrun), len(allrun)),
                 "<= 1 s", max(allrun) <= 1000))
on, off = bpf_per_conn("bpf-pin-on4"), bpf_per_conn("bpf-pin-off4")
if on is not None and off is not None:
    rows.append(("SNI pinning: BPF per pinned TLS connection", "+%.1f µs" % ((on - off) / 1000),
                 "<= +3 µs", on - off <= 3000))
bk, bb = doc.get("bulk_mib_s", {}).get("bulk-egret"), doc.get("bulk_bpf")
if bk and bb:
    sh = bb["share_of_unrestricted_sender_cpu"]["median"]
    rows.append(("bulk upload: throughput paired; the egress program's share of the sender's CPU",
                 "%.3f; %.2f %%" % (bk["paired_ratio_median"], 100 * sh), ">= 0.99; <= 1 %",
                 bk["paired_ratio_median"] >= 0.99 and sh <= 0.01))
if "seed" not in missing:
    behind = []
    for row, key, what, lower in ROWS:
        pe, ps = paired(row, key, "egret"), paired(row, key, "seed")
        qe, qs = (pe[0], ps[0]) if pe and ps else (ratio(row, key, "egret"), ratio(row, key, "seed"))
        if qe is None or qs is None:
            continue
        if (qe > qs) if lower else (qe < qs):
            behind.append("%s (%.3f vs %.3f)" % (what.split(",")[0], qe, qs))
    qe, qs = paired_conn("egret4"), paired_conn("iptables4")
    if qe is not None and qs is not None and qe > qs:
        behind.append("connect+close (%.3f vs %.3f)" % (qe, qs))
    rows.append(("never behind the seed design", "; ".join(behind) or "behind on none",
                 "behind on none", not behind))
print("\n| target (issue 42) | this run | goal | verdict |")
print("|---|---|---|---|")
for what, value, goal, ok in rows:
    print("| %s | %s | %s | %s |" % (what, value, goal, verdict(ok)))
res["targets"] = [{"target": w, "value": v, "goal": g, "met": ok} for w, v, g, ok in rows]
res["missing"] = missing
doc["peers"] = res
json.dump(doc, open(out, "w"), indent=1)
