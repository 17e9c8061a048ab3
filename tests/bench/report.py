#!/usr/bin/env python3
"""report.py RAW JSON: summarise bench.sh's raw.txt as a markdown table on
stdout and a JSON file. Medians, min/max; ratios are of medians."""
import json
import statistics as st
import sys
from collections import defaultdict

raw, out = sys.argv[1], sys.argv[2]
conn = defaultdict(list)            # variant -> [us]
byround = defaultdict(dict)         # variant -> {round: us}
prog = defaultdict(lambda: [0, 0])  # (variant, name, type) -> [cnt, ns]
progr = defaultdict(list)           # (variant, name, type) -> [ns/run per round]
launch = defaultdict(list)          # what -> [(ms, kb, status)]
conc = []
bulk = defaultdict(list)            # variant -> [MiB/s]
dnsr = defaultdict(list)            # variant-kind-mode -> [{qps, p50_us, ...}]
meta = {}
phases = []                         # (set-up ms, BPF load ms) from egret -v
for line in open(raw):
    f = line.split()
    if not f:
        continue
    if f[0] == "connect":
        conn[f[1]].append(float(f[3]))
        byround[f[1]][f[2]] = float(f[3])
    elif f[0] == "prog":
        k = (f[1], f[3], f[4])
        cnt, ns = int(f[5]), int(f[6])
        prog[k][0] += cnt
        prog[k][1] += ns
        if cnt:
            progr[k].append(ns / cnt)
    elif f[0] == "dns":
        d = dict(zip(f[3::2], f[4::2]))
        dnsr[f[1]].append({k: float(x) for k, x in d.items()})
    elif f[0] == "bulk":
        bulk[f[1]].append(float(f[3]))
    elif f[0] == "launch":
        launch[f[1]].append((float(f[3]), int(f[4]), int(f[5])))
    elif f[0] == "conc":
        conc.append((float(f[3]), int(f[4]), int(f[5])))
    elif f[0] == "meta":
        meta[f[1]] = f[2]
    elif f[0] == "phase":
        phases.append((float(f[2]), float(f[3]), f[4] if len(f) > 4 else "?"))


def summ(xs):
    return {"median": st.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


res = {"connect_us": {}, "bpf_prog_ns_per_run": {}, "launch": {}, "meta": meta}
print("| measurement | variant | median | min | max | rounds | ratio to unrestricted (of medians; median of per-round paired ratios) |")
print("|---|---|---|---|---|---|---|")
base = {"4": "unrestricted4", "6": "unrestricted6"}
for v in ["unrestricted4", "cgroup4", "egret4", "egretdns4", "iptables4", "unrestricted6", "e10", "e10000", "e65536"]:
    if v not in conn:
        continue
    s = summ(conn[v])
    b = base["4"] if v.endswith("4") else base["6"]
    s["ratio"] = s["median"] / st.median(conn[b])
    pr = [byround[v][r] / byround[b][r] for r in byround[v] if r in byround[b]]
    s["paired_ratio_median"] = st.median(pr)
    s["paired_ratio_min"], s["paired_ratio_max"] = min(pr), max(pr)
    res["connect_us"][v] = s
    label = {"unrestricted4": "connect+close µs, IPv4", "egret4": "connect+close µs, IPv4, static allow entry",
             "egretdns4": "connect+close µs, IPv4, DNS-learned allow entry", "cgroup4": "connect+close µs, IPv4, empty cgroup",
             "iptables4": "connect+close µs, IPv4, dnsmasq+ipset+iptables",
             "unrestricted6": "connect+close µs, IPv6"}.get(v, "connect+close µs, IPv6, %s map entries" % v[1:])
    print(f"| {label} | {v} | {s['median']:.2f} | {s['min']:.2f} | {s['max']:.2f} | {s['n']} | {s['ratio']:.3f}; {s['paired_ratio_median']:.3f} ({s['paired_ratio_min']:.2f}–{s['paired_ratio_max']:.2f}) |")
for (v, name, at), (cnt, ns) in sorted(prog.items()):
    if not cnt:
        continue
    per = progr[(v, name, at)]
    d = {"runs": cnt, "ns_per_run_total": ns / cnt, "ns_per_run_median_round": st.median(per),
         "min_round": min(per), "max_round": max(per)}
    res["bpf_prog_ns_per_run"].setdefault(v, {})[f"{name}/{at}"] = d
    print(f"| BPF {name} ({at}) ns/run, {cnt // len(per)} runs/round | {v} | {d['ns_per_run_median_round']:.0f} | {d['min_round']:.0f} | {d['max_round']:.0f} | {len(per)} | |")
res["dns"] = {}
for kind in ["allowed", "denied"]:
    for mode, key, unit in [("qps", "qps", "queries/s, 32 in flight"), ("lat", "p50_us", "p50 latency µs, 1 in flight"), ("lat", "p99_us", "p99 latency µs, 1 in flight")]:
        base_v = f"dns-direct-{kind}-{mode}"
        for v in ["dns-direct", "dns-dnsmasq", "dns-egret"]:
            k = f"{v}-{kind}-{mode}"
            if k not in dnsr:
                continue
            xs = [d[key] for d in dnsr[k]]
            s = summ(xs)
            s["ratio"] = s["median"] / st.median([d[key] for d in dnsr[base_v]])
            s["lost_total"] = sum(d["lost"] for d in dnsr[k])
            s["nxdomain_total"] = sum(d["nxdomain"] for d in dnsr[k])
            res["dns"][f"{k}-{key}"] = s
            print(f"| DNS {kind} names, {unit} | {v[4:]} | {s['median']:.0f} | {s['min']:.0f} | {s['max']:.0f} | {s['n']} | {s['ratio']:.3f} to direct; lost {s['lost_total']:.0f}, NXDOMAIN {s['nxdomain_total']:.0f} |")
res["bulk_mib_s"] = {}
for v in ["bulk-unrestricted", "bulk-egret", "bulk-tinyproxy"]:
    if v not in bulk:
        continue
    s = summ(bulk[v])
    s["ratio"] = s["median"] / st.median(bulk["bulk-unrestricted"])
    res["bulk_mib_s"][v] = s
    print(f"| bulk TCP upload MiB/s | {v[5:]} | {s['median']:.0f} | {s['min']:.0f} | {s['max']:.0f} | {s['n']} | {s['ratio']:.3f} (of medians) |")
for what, rows in launch.items():
    ms = [r[0] for r in rows]
    kb = [r[1] for r in rows]
    bad = sum(1 for r in rows if r[2] != 0)
    s = summ(ms)
    s["maxrss_kb_median"] = st.median(kb)
    s["maxrss_kb_max"] = max(kb)
    s["nonzero_exits"] = bad
    res["launch"][what] = s
    cmd = {"egret": "egret run -- true`, a spare ready", "egret-cold": "egret run --no-spare -- true`, loaded on the spot", "true": "true`"}[what]
    print(f"| launch wall ms (`{cmd}) | sequential | {s['median']:.1f} | {s['min']:.1f} | {s['max']:.1f} | {s['n']} | |")
    print(f"| launch peak RSS KiB | {what} | {s['maxrss_kb_median']:.0f} | {min(kb)} | {max(kb)} | {s['n']} | |")
if conc:
    ms = [c[0] for c in conc]
    s = summ(ms)
    s["ok"] = [c[1] for c in conc]
    s["maxrss_kb_max"] = max(c[2] for c in conc)
    res["launch"]["concurrent50"] = s
    print(f"| 50 concurrent `egret run -- true`, wall ms for all | egret | {s['median']:.1f} | {s['min']:.1f} | {s['max']:.1f} | {s['n']} | exit 0: {s['ok']} of 50 |")
if phases:
    for how in ["spare", "now"]:
        rows = [p for p in phases if p[2] == how]
        if not rows:
            continue
        for i, what in [(0, "egret set-up (record, cgroup, proxy, programs, attach, pins), ms"), (1, "of which getting the BPF programs, ms")]:
            s = summ([p[i] for p in rows])
            res["launch"][f"phase_{'setup' if i == 0 else 'bpf'}_{how}"] = s
            label = "taken from a spare" if how == "spare" else "loaded now"
            print(f"| {what} | {label} (egret -v) | {s['median']:.1f} | {s['min']:.1f} | {s['max']:.1f} | {s['n']} | |")
if "map_memlock_bytes" in meta:
    print(f"| kernel memory of one attempt's maps (memlock), KiB | egret | {int(meta['map_memlock_bytes']) / 1024:.0f} | | | 1 | |")
json.dump(res, open(out, "w"), indent=1)
