#!/usr/bin/env python3
"""report.py RAW JSON: summarise bench.sh's raw.txt as a markdown table on
stdout and a JSON file. Medians, min/max; ratios are of medians."""
import json
import statistics as st
import sys
from collections import defaultdict

raw, out = sys.argv[1], sys.argv[2]
MIB_DEFAULT = 1024                  # bench.sh's BENCH_MIB: what one bulk round sends
conn = defaultdict(list)            # variant -> [us]
byround = defaultdict(dict)         # variant -> {round: us}
prog = defaultdict(lambda: [0, 0])  # (variant, name, type) -> [cnt, ns]
progr = defaultdict(list)           # (variant, name, type) -> [ns/run per round]
launch = defaultdict(list)          # what -> [(ms, kb, status)]
conc = []
bulk = defaultdict(list)            # variant -> [MiB/s]
bulkr = defaultdict(dict)           # variant -> {round: (MiB/s, cpu µs)}
egretd_seq = []                     # (ms, rc)
egretd_burst = defaultdict(list)    # burst -> [(ms, rc)]
egretd_bursts = []                  # (burst, n, ok, all_running_ms, done_ms, rss_kb, keeper_kb)
floods = []                         # (round, n, accounted, lines, lost)
bulkbpf = []                        # (egress ns, egress runs, MiB, sender cpu µs)
acctbpf = defaultdict(list)         # off|on|budget -> [(egress ns, runs, MiB)]
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
        bulkr[f[1]][f[2]] = (float(f[3]), float(f[4]) if len(f) > 4 else 0.0)
    elif f[0] == "egretd":
        if f[1] == "seq":
            egretd_seq.append((float(f[3]), int(f[4])))
        else:
            egretd_burst[f[1]].append((float(f[3]), int(f[4])))
    elif f[0] == "egretd-burst":
        egretd_bursts.append(tuple(int(x) for x in f[1:8]))
    elif f[0] == "bulkbpf":
        bulkbpf.append((int(f[2]), int(f[3]), int(f[4]), float(f[5])))
    elif f[0] == "acctbpf":
        acctbpf[f[1]].append((int(f[3]), int(f[4]), int(f[5])))
    elif f[0] == "flood":
        floods.append(tuple(int(x) for x in f[2:7]))
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


def pct(xs, p):
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int((len(ys) - 1) * p + 0.5))]


res = {"connect_us": {}, "bpf_prog_ns_per_run": {}, "launch": {}, "meta": meta}
print("| measurement | variant | median | min | max | rounds | ratio to unrestricted (of medians; median of per-round paired ratios) |")
print("|---|---|---|---|---|---|---|")
for v in ["unrestricted4", "cgroup4", "egret4", "egretdns4", "iptables4", "unrestricted6", "e10", "e10000", "e65536", "lo-unrestricted", "lo-egret", "pin-off4", "pin-on4", "http-off4", "http-on4", "acct-off4", "acct-on4", "acct-budget4"]:
    if v not in conn:
        continue
    s = summ(conn[v])
    b = "lo-unrestricted" if v.startswith("lo-") else "pin-off4" if v.startswith("pin-") else \
        "http-off4" if v.startswith("http-") else "acct-off4" if v.startswith("acct-") else \
        "unrestricted4" if v.endswith("4") else "unrestricted6"
    s["ratio"] = s["median"] / st.median(conn[b])
    pr = [byround[v][r] / byround[b][r] for r in byround[v] if r in byround[b]]
    s["paired_ratio_median"] = st.median(pr)
    s["paired_ratio_min"], s["paired_ratio_max"] = min(pr), max(pr)
    res["connect_us"][v] = s
    label = {"unrestricted4": "connect+close µs, IPv4", "egret4": "connect+close µs, IPv4, static allow entry",
             "egretdns4": "connect+close µs, IPv4, DNS-learned allow entry", "cgroup4": "connect+close µs, IPv4, empty cgroup",
             "iptables4": "connect+close µs, IPv4, dnsmasq+ipset+iptables",
             "unrestricted6": "connect+close µs, IPv6", "lo-unrestricted": "connect+close µs, loopback",
             "lo-egret": "connect+close µs, loopback, explicit loopback allow",
             "pin-off4": "connect+ClientHello+close µs, learned entry, pinning off (ratio: to itself)",
             "pin-on4": "connect+ClientHello+close µs, learned entry, SNI pinning on (ratio: to pinning off)",
             "http-off4": "connect+GET+close µs, learned entry, pinning off (ratio: to itself)",
             "http-on4": "connect+GET+close µs, learned entry, Host pinning on (ratio: to pinning off)",
             "acct-off4": "connect+close µs, static entry, egret before accounting (ratio: to itself)",
             "acct-on4": "connect+close µs, static entry, accounting (ratio: to before)",
             "acct-budget4": "connect+close µs, static entry, accounting and a budget (ratio: to before)"}.get(v, "connect+close µs, IPv6, %s map entries" % v[1:])
    print(f"| {label} | {v} | {s['median']:.2f} | {s['min']:.2f} | {s['max']:.2f} | {s['n']} | {s['ratio']:.3f}; {s['paired_ratio_median']:.3f} ({s['paired_ratio_min']:.2f}–{s['paired_ratio_max']:.2f}) |")
for (v, name, at), (cnt, ns) in sorted(prog.items()):
    if not cnt:
        continue
    per = progr[(v, name, at)]
    d = {"runs": cnt, "rounds": len(per), "ns_per_run_total": ns / cnt,
         "ns_per_run_median_round": st.median(per),
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
def paired(a, b, i):
    """Per-round ratios of field i of variant a to variant b (bulkr)."""
    return [bulkr[a][r][i] / bulkr[b][r][i] for r in bulkr[a] if r in bulkr[b] and bulkr[b][r][i]]


for v in ["bulk-unrestricted", "bulk-egret", "bulk-tinyproxy", "bulk-pin-off", "bulk-pin-on", "fetch-pin-off", "fetch-pin-on", "bulk-acct-off", "bulk-acct-on", "bulk-acct-budget"]:
    if v not in bulk:
        continue
    b = "bulk-pin-off" if v.startswith("bulk-pin") else "fetch-pin-off" if v.startswith("fetch-") else \
        "bulk-acct-off" if v.startswith("bulk-acct") else "bulk-unrestricted"
    s = summ(bulk[v])
    s["ratio"] = s["median"] / st.median(bulk[b])
    pr = paired(v, b, 0)
    s["paired_ratio_median"] = st.median(pr)
    s["paired_ratio_min"], s["paired_ratio_max"] = min(pr), max(pr)
    cpu = [bulkr[v][r][1] for r in bulkr[v]]
    s["cpu_us_median"] = st.median(cpu)
    cr = paired(v, b, 1)
    s["cpu_paired_ratio_median"] = st.median(cr)
    s["cpu_paired_ratio_min"], s["cpu_paired_ratio_max"] = min(cr), max(cr)
    res["bulk_mib_s"][v] = s
    if v.startswith("fetch-"):
        print(f"| TCP download by GET MiB/s | {v[6:]} | {s['median']:.0f} | {s['min']:.0f} | {s['max']:.0f} | {s['n']} | {s['ratio']:.3f} (of medians); {s['paired_ratio_median']:.3f} paired |")
        print(f"| TCP download by GET, receiver CPU ms per GiB | {v[6:]} | {s['cpu_us_median'] / 1000:.0f} | {min(cpu) / 1000:.0f} | {max(cpu) / 1000:.0f} | {s['n']} | {s['cpu_paired_ratio_median']:.3f} paired ({s['cpu_paired_ratio_min']:.3f}–{s['cpu_paired_ratio_max']:.3f}) |")
        continue
    print(f"| bulk TCP upload MiB/s | {v[5:]} | {s['median']:.0f} | {s['min']:.0f} | {s['max']:.0f} | {s['n']} | {s['ratio']:.3f} (of medians); {s['paired_ratio_median']:.3f} paired |")
    print(f"| bulk TCP upload, sender CPU ms per GiB | {v[5:]} | {s['cpu_us_median'] / 1000:.0f} | {min(cpu) / 1000:.0f} | {max(cpu) / 1000:.0f} | {s['n']} | {s['cpu_paired_ratio_median']:.3f} paired ({s['cpu_paired_ratio_min']:.3f}–{s['cpu_paired_ratio_max']:.3f}) |")
if bulkbpf and "bulk-unrestricted" in res["bulk_mib_s"]:
    per_pkt = [ns / cnt for ns, cnt, _, _ in bulkbpf if cnt]
    us_gib = [ns / 1000 / (mib / 1024) for ns, _, mib, _ in bulkbpf]
    pkts_mib = [cnt / mib for _, cnt, mib, _ in bulkbpf]
    base_us_gib = res["bulk_mib_s"]["bulk-unrestricted"]["cpu_us_median"] / (MIB_DEFAULT / 1024)
    share = [u / base_us_gib for u in us_gib]
    res["bulk_bpf"] = {"egress_ns_per_packet": summ(per_pkt), "egress_us_per_gib": summ(us_gib),
                       "packets_per_mib": summ(pkts_mib), "share_of_unrestricted_sender_cpu": summ(share)}
    print(f"| bulk TCP upload: egress program ns per packet (stats on) | egret | {st.median(per_pkt):.0f} | {min(per_pkt):.0f} | {max(per_pkt):.0f} | {len(per_pkt)} | {st.median(pkts_mib):.0f} packets per MiB |")
    print(f"| bulk TCP upload: egress program µs per GiB, share of the unrestricted sender's CPU per GiB | egret | {st.median(us_gib):.0f} | {min(us_gib):.0f} | {max(us_gib):.0f} | {len(us_gib)} | {100 * st.median(share):.2f} % ({100 * min(share):.2f}–{100 * max(share):.2f} %) |")
for what, rows in launch.items():
    ms = [r[0] for r in rows]
    kb = [r[1] for r in rows]
    bad = sum(1 for r in rows if r[2] != 0)
    s = summ(ms)
    s["maxrss_kb_median"] = st.median(kb)
    s["maxrss_kb_max"] = max(kb)
    s["nonzero_exits"] = bad
    res["launch"][what] = s
    cmd = {"egret": "egret run -- true`, the pinned set", "egret-cold": "egret run --no-shared -- true`, loaded on the spot", "true": "true`"}[what]
    print(f"| launch wall ms (`{cmd}) | sequential | {s['median']:.1f} | {s['min']:.1f} | {s['max']:.1f} | {s['n']} | |")
    print(f"| launch peak RSS KiB | {what} | {s['maxrss_kb_median']:.0f} | {min(kb)} | {max(kb)} | {s['n']} | |")
if conc:
    ms = [c[0] for c in conc]
    s = summ(ms)
    s["ok"] = [c[1] for c in conc]
    s["maxrss_kb_max"] = max(c[2] for c in conc)
    res["launch"]["concurrent100"] = s
    print(f"| 100 concurrent `egret run -- true`, wall ms for all | egret | {s['median']:.1f} | {s['min']:.1f} | {s['max']:.1f} | {s['n']} | exit 0: {s['ok']} of 100 |")
if phases:
    for how in ["shared", "now"]:
        rows = [p for p in phases if p[2] == how]
        if not rows:
            continue
        for i, what in [(0, "egret set-up (record, cgroup, proxy, programs, attach, pins), ms"), (1, "of which getting the BPF programs, ms")]:
            s = summ([p[i] for p in rows])
            res["launch"][f"phase_{'setup' if i == 0 else 'bpf'}_{how}"] = s
            label = "the pinned set" if how == "shared" else "loaded now"
            print(f"| {what} | {label} (egret -v) | {s['median']:.1f} | {s['min']:.1f} | {s['max']:.1f} | {s['n']} | |")
for k, label in [("attempt_memlock_bytes", "kernel memory one attempt adds: its slot's ring buffer and repeat counts (memlock), KiB"),
                 ("set_maps_memlock_bytes", "kernel memory of the set's maps, once per build (memlock), KiB"),
                 ("set_progs_memlock_bytes", "kernel memory of the set's programs, once per build (memlock), KiB")]:
    if k in meta:
        print(f"| {label} | egret | {int(meta[k]) / 1024:.0f} | | | 1 | |")
if egretd_seq:
    ms = [m for m, _ in egretd_seq]
    s = summ(ms)
    s["p90"] = pct(ms, 0.9)
    s["nonzero_exits"] = sum(1 for _, rc in egretd_seq if rc)
    res["egretd_seq_ms"] = s
    print(f"| through egretd, one at a time: caller start to COMMAND running, ms | egretd | {s['median']:.1f} | {s['min']:.1f} | {s['max']:.1f} | {s['n']} | p90 {s['p90']:.1f}; {s['nonzero_exits']} nonzero exits |")
for b, n, ok, allrun, done, rss, krss in egretd_bursts:
    ms = [m for m, _ in egretd_burst.get(f"burst{b}", [])]
    s = summ(ms) if ms else {"median": float("nan"), "min": 0, "max": 0, "n": 0}
    s.update({"n_callers": n, "ok": ok, "all_running_ms": allrun, "all_done_ms": done,
              "handler_rss_kb": rss, "keeper_rss_kb": krss, "p90": pct(ms, 0.9) if ms else 0})
    res.setdefault("egretd_bursts", []).append(s)
    print(f"| through egretd, {n} at once (burst {b}): caller start to COMMAND running, ms | egretd | {s['median']:.0f} | {s['min']:.0f} | {s['max']:.0f} | {s['n']} | p90 {s['p90']:.0f}; all running after {allrun} ms; {ok} of {n} exit 0; per attempt {rss} KiB handler + {krss} KiB keeper resident |")
for r, n, acc, lines, lost in floods:
    res.setdefault("flood", []).append({"round": r, "n": n, "accounted": acc, "log_lines": lines, "lost_in_summary": lost})
    print(f"| {n} denied connects in a burst: decisions the log accounts for | egret | {acc} | | | 1 | {lines} log lines; lost {n - acc} ({100 * (n - acc) / n:.2f} %); the summary's events lost: {lost} |")

# The targets of issue 17, each from this run's figures.
T = []


def target(what, value, ok, goal):
    T.append((what, value, ok, goal))


def cm(v, k="paired_ratio_median"):
    return res["connect_us"].get(v, {}).get(k)


def bpf(v, name):
    d = res["bpf_prog_ns_per_run"].get(v, {})
    for key, x in d.items():
        if key.startswith(name + "/"):
            return x["ns_per_run_median_round"]
    return None


for v, goal, label in [("egret4", 1.02, "connect+close over veth, static entry"),
                       ("egretdns4", 1.03, "connect+close over veth, DNS-learned entry"),
                       ("lo-egret", 1.03, "connect+close on loopback, explicit loopback allow")]:
    x = cm(v)
    if x is not None:
        target(label, f"{x:.3f} paired (of medians {cm(v, 'ratio'):.3f})", x <= goal, f"≤ {goal}")
for v, label in [("bpf-static4", "static"), ("bpf-learned4", "learned")]:
    c, e = bpf(v, "egret_connect4"), bpf(v, "egret_egress")
    if c is not None and e is not None:
        target(f"BPF connect4 + egress per packet, {label}", f"{c:.0f} + {e:.0f} = {c + e:.0f} ns", c + e <= 600, "≤ 600 ns")
q = res["dns"]
if "dns-egret-allowed-qps-qps" in q:
    r1 = q["dns-egret-allowed-qps-qps"]["ratio"]
    r2 = q["dns-egret-allowed-qps-qps"]["median"] / q["dns-dnsmasq-allowed-qps-qps"]["median"]
    target("DNS queries/s, allowed names, 32 in flight", f"{r1:.2f} of direct, {r2:.2f}× dnsmasq", r1 >= 0.8 and r2 >= 2, "≥ 0.8 of direct and ≥ 2× dnsmasq")
    p99 = q["dns-egret-allowed-lat-p99_us"]["ratio"]
    target("DNS p99, allowed names", f"{p99:.2f} of direct", p99 <= 1.3, "≤ 1.3")
if "bulk-egret" in res["bulk_mib_s"] and "bulk_bpf" not in res:
    target("bulk TCP upload", "the egress program's share not measured in this run", False, "≥ 0.99 throughput and ≤ 1 % more CPU per byte")
if "bulk-egret" in res["bulk_mib_s"] and "bulk_bpf" in res:
    b = res["bulk_mib_s"]["bulk-egret"]
    sh = res["bulk_bpf"]["share_of_unrestricted_sender_cpu"]
    target("bulk TCP upload", f"{b['paired_ratio_median']:.3f} paired throughput; the egress program's CPU per byte {100 * sh['median']:.2f} % ({100 * sh['min']:.2f}–{100 * sh['max']:.2f} %) of the unrestricted sender's (measured, stats on); the sender's whole CPU per byte {b['cpu_paired_ratio_median']:.3f} paired ({b['cpu_paired_ratio_min']:.2f}–{b['cpu_paired_ratio_max']:.2f}: too noisy to resolve 1 %)",
           b["paired_ratio_median"] >= 0.99 and sh["max"] <= 0.01, "≥ 0.99 throughput and ≤ 1 % more CPU per byte")
if "egretd_seq_ms" in res:
    bursts = res.get("egretd_bursts", [])
    worst = max([x["median"] for x in bursts] or [0])
    s = res["egretd_seq_ms"]["median"]
    target("attempt start through egretd, p50", f"{s:.1f} ms one at a time; {worst:.0f} ms in a burst of 100 (worst of {len(bursts)} bursts' p50)", s <= 5 and worst <= 5, "≤ 5 ms, with or without a burst")
    allrun = [x["all_running_ms"] for x in bursts]
    if allrun:
        target("100 attempts at once through egretd: all running", f"{min(allrun)}–{max(allrun)} ms ({', '.join(str(a) for a in allrun)})", max(allrun) <= 1000, "≤ 1 s")
if "concurrent100" in res["launch"]:
    c = res["launch"]["concurrent100"]
    target("100 `egret run` at once (root, no egretd): wall for all", f"{c['median']:.0f} ms median of {c['n']}", c["median"] <= 1000, "≤ 1 s")
if "attempt_memlock_bytes" in meta:
    kib = int(meta["attempt_memlock_bytes"]) / 1024
    target("kernel memory per attempt", f"{kib:.0f} KiB (its slot's maps; the set's {int(meta.get('set_maps_memlock_bytes', 0)) / 1048576:.1f} MiB of maps and {int(meta.get('set_progs_memlock_bytes', 0)) / 1024:.0f} KiB of programs once)", kib <= 1024, "≤ 1 MiB")
if floods:
    worst = max((n - acc) / n for _, n, acc, _, _ in floods)
    target("100 000 denied connects in a burst: events lost", f"{100 * worst:.2f} % (worst of {len(floods)})", worst <= 0.01, "≤ 1 %")
# SNI pinning (issue 18): on against off, in the same run.
P = []
if "pin-on4" in res["connect_us"]:
    c = res["connect_us"]["pin-on4"]
    d = c["median"] - res["connect_us"]["pin-off4"]["median"]
    P.append(("connect + ClientHello + close, learned address", f"{c['paired_ratio_median']:.3f} paired ({c['paired_ratio_min']:.2f}–{c['paired_ratio_max']:.2f}); {d:+.2f} µs of medians"))
if "bulk-pin-on" in res["bulk_mib_s"]:
    b = res["bulk_mib_s"]["bulk-pin-on"]
    P.append((f"bulk upload after a ClientHello ({MIB_DEFAULT} MiB)", f"{b['paired_ratio_median']:.3f} paired throughput ({b['paired_ratio_min']:.2f}–{b['paired_ratio_max']:.2f}); sender CPU per byte {b['cpu_paired_ratio_median']:.3f} paired"))
n_conn = int(meta.get("connects_per_round", 0))


def bpf_per_conn(v):
    rounds = len({r for (vv, _, _), per in progr.items() if vv == v for r in range(len(per))}) or 1
    tot = sum(ns for (vv, _, _), (_, ns) in prog.items() if vv == v)
    runs = [len(per) for (vv, _, _), per in progr.items() if vv == v]
    return tot / (max(runs) * n_conn) if runs and n_conn else None


on, off = bpf_per_conn("bpf-pin-on4"), bpf_per_conn("bpf-pin-off4")
if on is not None and off is not None:
    tls = res["bpf_prog_ns_per_run"].get("bpf-pin-on4", {}).get("egret_tls/sk_msg", {})
    P.append(("BPF per connection (every program, stats on)", f"{on:.0f} ns pinned, {off:.0f} ns not: +{on - off:.0f} ns; egret_tls {tls.get('ns_per_run_median_round', 0):.0f} ns/run"))
res["pinning"] = [{"what": w, "value": v} for w, v in P]
if P:
    print()
    print("| SNI pinning, on vs off in this run | figure |")
    print("|---|---|")
    for w, v in P:
        print(f"| {w} | {v} |")
# Host pinning (issue 27): on against off, in the same run.
HP = []
if "http-on4" in res["connect_us"]:
    c = res["connect_us"]["http-on4"]
    d = c["median"] - res["connect_us"]["http-off4"]["median"]
    HP.append(("connect + GET + close, learned address", f"{c['paired_ratio_median']:.3f} paired ({c['paired_ratio_min']:.2f}–{c['paired_ratio_max']:.2f}); {d:+.2f} µs of medians"))
if "fetch-pin-on" in res["bulk_mib_s"]:
    b = res["bulk_mib_s"]["fetch-pin-on"]
    HP.append((f"download by GET ({MIB_DEFAULT} MiB)", f"{b['paired_ratio_median']:.3f} paired throughput ({b['paired_ratio_min']:.2f}–{b['paired_ratio_max']:.2f}); receiver CPU per byte {b['cpu_paired_ratio_median']:.3f} paired"))
on, off = bpf_per_conn("bpf-http-on4"), bpf_per_conn("bpf-http-off4")
if on is not None and off is not None:
    eg = res["bpf_prog_ns_per_run"].get("bpf-http-on4", {}).get("egret_egress/cgroup_inet_egress", {})
    HP.append(("BPF per connection (every program, stats on)", f"{on:.0f} ns pinned, {off:.0f} ns not: +{on - off:.0f} ns; egret_egress {eg.get('ns_per_run_median_round', 0):.0f} ns/run"))
res["host_pinning"] = [{"what": w, "value": v} for w, v in HP]
if HP:
    print()
    print("| Host pinning, on vs off in this run | figure |")
    print("|---|---|")
    for w, v in HP:
        print(f"| {w} | {v} |")
# Accounting (issue 28): before it against this build, in the same run.
A = []
for v, what in [("acct-on4", "connect + close, static entry, accounting"),
                ("acct-budget4", "connect + close, static entry, accounting and a budget")]:
    if v in res["connect_us"]:
        c = res["connect_us"][v]
        d = c["median"] - res["connect_us"]["acct-off4"]["median"]
        A.append((what, f"{c['paired_ratio_median']:.3f} paired ({c['paired_ratio_min']:.2f}–{c['paired_ratio_max']:.2f}); {d:+.2f} µs of medians"))
for v, what in [("bulk-acct-on", "bulk upload, accounting"), ("bulk-acct-budget", "bulk upload, accounting and a budget")]:
    if v in res["bulk_mib_s"]:
        b = res["bulk_mib_s"][v]
        A.append((f"{what} ({MIB_DEFAULT} MiB)", f"{b['paired_ratio_median']:.3f} paired throughput ({b['paired_ratio_min']:.2f}–{b['paired_ratio_max']:.2f}); sender CPU per byte {b['cpu_paired_ratio_median']:.3f} paired"))
res["accounting_bpf"] = {}
for v in ["off", "on", "budget"]:
    if acctbpf.get(v):
        per_pkt = [ns / cnt for ns, cnt, _ in acctbpf[v] if cnt]
        pkts_mib = [cnt / mib for _, cnt, mib in acctbpf[v]]
        res["accounting_bpf"][v] = {"egress_ns_per_packet": summ(per_pkt), "packets_per_mib": summ(pkts_mib)}
        A.append((f"upload: egress program ns per packet ({'before accounting' if v == 'off' else 'accounting' if v == 'on' else 'accounting and a budget'}, stats on)",
                  f"{st.median(per_pkt):.0f} ns ({min(per_pkt):.0f}–{max(per_pkt):.0f}), {st.median(pkts_mib):.0f} packets per MiB"))
on, off = bpf_per_conn("bpf-acct-on4"), bpf_per_conn("bpf-acct-off4")
if on is not None and off is not None:
    eg = res["bpf_prog_ns_per_run"].get("bpf-acct-on4", {}).get("egret_egress/cgroup_inet_egress", {})
    eg0 = res["bpf_prog_ns_per_run"].get("bpf-acct-off4", {}).get("egret_egress/cgroup_inet_egress", {})
    A.append(("BPF per connect + close (every program, stats on)",
              f"{on:.0f} ns with accounting, {off:.0f} ns before: {on - off:+.0f} ns; egret_egress {eg.get('ns_per_run_median_round', 0):.0f} ns/run against {eg0.get('ns_per_run_median_round', 0):.0f}"))
res["accounting"] = [{"what": w, "value": v} for w, v in A]
if A:
    print()
    print(f"| accounting, against egret before it ({meta.get('acct_base', '?')}), in this run | figure |")
    print("|---|---|")
    for w, v in A:
        print(f"| {w} | {v} |")
res["targets"] = [{"what": w, "value": v, "met": ok, "target": g} for w, v, ok, g in T]
print()
print("| target (issue 17) | this run | goal | verdict |")
print("|---|---|---|---|")
for w, v, ok, g in T:
    print(f"| {w} | {v} | {g} | {'**met**' if ok else '**missed**'} |")

# The targets of issue 30, each from this run's figures; a row whose
# figures this run lacks (BENCH_ONLY) says so instead of a verdict.
T30 = []


def target30(what, value, ok, goal):
    T30.append((what, value, ok, goal))


L = res["launch"]
if "phase_bpf_now" in L:
    x = L["phase_bpf_now"]["median"]
    target30("private load of the programs (`--no-shared`)", f"{x:.0f} ms to get the programs ({L['phase_bpf_now']['min']:.0f}–{L['phase_bpf_now']['max']:.0f}); `egret run --no-shared -- true` {L.get('egret-cold', {}).get('median', float('nan')):.0f} ms", x <= 300, "≤ 300 ms")
if "egret" in L:
    x = L["egret"]["median"]
    target30("`egret run -- true`, the pinned set", f"{x:.1f} ms ({L['egret']['min']:.1f}–{L['egret']['max']:.1f}); `true` alone {L.get('true', {}).get('median', float('nan')):.1f} ms", x <= 5, "≤ 5 ms")
if "egretd_seq_ms" in res:
    x = res["egretd_seq_ms"]["median"]
    target30("through egretd one at a time, caller start to COMMAND running", f"{x:.1f} ms", x <= 5, "≤ 5 ms")
allrun = [b["all_running_ms"] for b in res.get("egretd_bursts", [])]
if allrun:
    target30("100 at once through egretd, all running", f"{max(allrun)} ms (worst of {len(allrun)})", max(allrun) <= 500, "≤ 0.5 s")
if "dns-egret-allowed-qps-qps" in q and "dns-dnsmasq-allowed-qps-qps" in q:
    r1 = q["dns-egret-allowed-qps-qps"]["ratio"]
    r2 = q["dns-egret-allowed-qps-qps"]["median"] / q["dns-dnsmasq-allowed-qps-qps"]["median"]
    target30("DNS allowed names, 32 in flight", f"{r1:.2f} of direct, {r2:.2f}× dnsmasq", r1 >= 0.8 and r2 >= 2, "≥ 0.8 of direct, ≥ 2× dnsmasq")
if "dns-egret-allowed-lat-p99_us" in q and "dns-dnsmasq-allowed-lat-p99_us" in q:
    p99 = q["dns-egret-allowed-lat-p99_us"]
    rows = []
    below = True
    for kind in ["allowed", "denied"]:
        for key, better in [("qps-qps", "higher"), ("lat-p50_us", "lower"), ("lat-p99_us", "lower")]:
            e, d = q.get(f"dns-egret-{kind}-{key}"), q.get(f"dns-dnsmasq-{kind}-{key}")
            if e and d:
                ok = e["median"] >= d["median"] if better == "higher" else e["median"] <= d["median"]
                below = below and ok
                rows.append(f"{kind} {key.split('-')[1]} {e['median']:.0f}/{d['median']:.0f}")
    target30("DNS p99, allowed names, 1 in flight; and every DNS row against dnsmasq", f"{p99['ratio']:.2f} of direct ({p99['median']:.0f} µs); egret/dnsmasq: {', '.join(rows)}", p99["ratio"] <= 1.5 and below, "≤ 1.5 of direct, better than dnsmasq on every row")
on, off = bpf_per_conn("bpf-pin-on4"), bpf_per_conn("bpf-pin-off4")
if on is not None and off is not None and "pin-on4" in res["connect_us"]:
    c = res["connect_us"]["pin-on4"]["paired_ratio_median"]
    target30("SNI pinning: BPF per pinned connection; connect + hello + close", f"+{(on - off) / 1000:.1f} µs ({on / 1000:.1f} against {off / 1000:.1f}); {c:.3f} paired", on - off <= 3000 and c <= 1.10, "≤ +3 µs of BPF, ≤ 1.10 paired")
xs = [(v, cm(v)) for v in ["egret4", "egretdns4", "lo-egret"]]
if all(x is not None for _, x in xs):
    target30("connect+close over veth, static / learned / loopback", " / ".join(f"{x:.3f}" for _, x in xs) + " paired", all(x <= 1.03 for _, x in xs), "≤ 1.03")
if "bulk-egret" in res["bulk_mib_s"] and "bulk_bpf" in res:
    b = res["bulk_mib_s"]["bulk-egret"]
    sh = res["bulk_bpf"]["share_of_unrestricted_sender_cpu"]
    target30("bulk upload", f"{b['paired_ratio_median']:.3f} paired throughput; egress program {100 * sh['median']:.2f} % of the sender's CPU per byte", b["paired_ratio_median"] >= 0.99 and sh["median"] <= 0.01, "≥ 0.99, ≤ 1 %")
res["targets_issue30"] = [{"what": w, "value": v, "met": ok, "target": g} for w, v, ok, g in T30]
if T30:
    print()
    print("| target (issue 30) | this run | goal | verdict |")
    print("|---|---|---|---|")
    for w, v, ok, g in T30:
        print(f"| {w} | {v} | {g} | {'**met**' if ok else '**missed**'} |")
json.dump(res, open(out, "w"), indent=1)
