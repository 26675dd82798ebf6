#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Adds the flat metrics to the x86 vectors (tests/vectors/{skx,icx,spr,gnr,zen4,zen5}*.json):
the expected value of every metric of the model, computed from the reference's own formulas,
never from cgtma's model files.

Intel: pmu-tools' model files (PMU_TOOLS/{skx,icx,spr,gnr}_server_ratios.py) are imported and
run as toplev runs them: each Metric_* object's compute() with the vector's counts (toplev's
EV), toplev's error rule (a division by zero makes the metric 0), Granite Rapids' retire
latencies from PMU_TOOLS/gnr-retlat.json (MEAN). toplev's metrics that cgtma cannot count
are left out by the rules of left_out_reason(), from what each metric reads, and printed
with the reason. IPC and CPI are toplev's; GHz = cycles / cpu_s / 1e9 is cgtma's own.

AMD: Linux perf's JSON (PERF_ARCH = tools/perf/pmu-events/arch): every metric of
x86/amdzen{4,5}/recommended.json and the two stall rates of common/common/metrics.json
(frontend_cycles_idle, backend_cycles_idle), their MetricExpr evaluated here on the vector's
counts and scaled as perf prints them (ScaleUnit: 1e3per_1k_instr is x 1000, 100% x 100).
perf's generic events are the PMCs the kernel counts for them on Zen 4 and family 0x1a
(KERNEL_GENERIC), named as perf's event files name those PMCs. A division by zero makes a
metric 0 (perf prints NaN; cgtma's rule is toplev's). Metrics that cgtma cannot count are
left out by amd_left_out_reason() and printed with the reason. IPC is perf's insn_per_cycle,
CPI its inverse, GHz cgtma's own.

Counts: the vectors' own (the instructions count and cpu_s of metrics.py among them), plus,
for events only metrics read, a count drawn from a hash of the model and event name (a share
of the vector's cycles; in the -zeros files about a third are 0, so that metrics divide by
zero). interval_s is set in every vector, and cpu_s where it has none.

Run from the repository root, with pmu-tools at commit 2568760f and/or a Linux tree (neither
committed here); only the files of the vendors given are rewritten:
  python3 tests/vectors/x86_metrics.py [--pmu-tools DIR] [--perf-arch DIR]
"""
import glob
import hashlib
import argparse
import importlib.util
import json
import os
import re

INTEL = {"skx": "skx_server_ratios.py", "icx": "icx_server_ratios.py",
         "spr": "spr_server_ratios.py", "gnr": "gnr_server_ratios.py"}
# cgtma's models name the tree's clocks and slots after these toplev metrics (aux entries
# with the same formulas), and a model's names are one namespace.
NAME_TAKEN = {"CLKS", "SLOTS", "CORE_CLKS"}
INTERVAL_S = 1.5


def h(*parts):
    """A number in [0, 1) from the names: the same counts on every run."""
    d = hashlib.sha256("/".join(parts).encode()).digest()
    return int.from_bytes(d[:8], "big") / 2.0**64


def new_count(model, ev, cycles, zeros):
    if zeros and h(model, ev, "zero") < 1 / 3:
        return 0.0
    return float(round(cycles * (0.002 + 0.4 * h(model, ev))))


def set_times(vec, cycles):
    vec["interval_s"] = INTERVAL_S
    # metrics.py's cpu_s is kept; else a busy CPU time that puts the frequency between 1.6
    # and 3.6 GHz (0.4 s without cycles)
    if "cpu_s" not in vec:
        vec["cpu_s"] = round(cycles / (1.6e9 + 2e9 * h(vec["model"], str(cycles))), 6) or 0.4


def ghz(cycles, cpu_s):
    return cycles / cpu_s / 1e9 if cpu_s else 0.0


# --- Intel: toplev's model files --------------------------------------------------------------

class Runner:
    def __init__(self):
        self.nodes, self.metrics = [], []

    def run(self, n):
        self.nodes.append(n)

    def metric(self, n):
        self.metrics.append(n)


class Missing(Exception):
    pass


def load_toplev(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def toplev_setup(mod, vec):
    mod.smt_enabled = bool(vec.get("smt"))
    if hasattr(mod, "topdown_use_fixed"):
        mod.topdown_use_fixed = bool(vec.get("perf_metrics"))
    r = Runner()
    mod.Setup(r)
    for n in r.nodes:
        n.thresh = False
        n.val = 0
    return r


def make_ev(counts, retlat, seen, seed=0, base=None):
    def ev(name, level):
        if callable(name):
            return name(ev, level)
        if name == "interval-s":
            return INTERVAL_S
        if level == 999:
            seen.add(("retlat", name))
            return retlat[name]["MEAN"]
        seen.add(("event", name))
        if counts is None:
            if base and name in base and base[name]:
                return base[name]
            return 1e6 * (1 + h(name, str(seed)))
        if name not in counts:
            raise Missing(name)
        return counts[name]
    return ev


def watch_nodes(r, touched):
    for n in r.nodes:
        orig = n.compute

        def compute(EV, n=n, orig=orig):
            touched.add(n.name)
            return orig(EV)
        n.compute = compute


def left_out_reason(name, events, nodes, tree):
    if name in NAME_TAKEN:
        return "its name is the model's aux for the tree's clocks or slots (same formula)"
    unc = sorted(n for n in events if n.startswith("UNC_"))
    if unc:
        return "uncore events (system-wide only): " + ", ".join(unc[:2])
    if "msr/tsc/" in events:
        return "msr/tsc/: the TSC over the whole interval, counted per CPU outside any group"
    if any(n.endswith(":percore") for n in events):
        return "a per-core count (both SMT threads summed: toplev's :percore)"
    deep = sorted(nodes - tree)
    if deep:
        return "reads nodes outside the level-3 tree (%s%s)" % (", ".join(deep[:3]),
                                                               "..." if len(deep) > 3 else "")
    return None


def intel_plan(mod, retlat, bases):
    """
    The metrics cgtma has, the events they read, and why the others are left out. What a
    formula reads is recorded over several runs (SMT on and off, both Top-Down paths, the
    model's vectors' counts with made-up ones for the events they lack), so that no branch
    or early division by zero hides a read. The tree is levels 1 to 3 and every node their
    formulas compute.
    """
    tree, events, nodes = set(), {}, {}
    for smt in (False, True):
        for fixed in (False, True):
            for seed, base in enumerate(bases):
                r = toplev_setup(mod, {"smt": smt, "perf_metrics": fixed})
                touched = set()
                watch_nodes(r, touched)
                for n in r.nodes:
                    if n.level <= 3:
                        n.compute(make_ev(None, retlat, set(), seed, base))
                tree |= touched
                for m in r.metrics:
                    seen = set()
                    touched.clear()
                    m.compute(make_ev(None, retlat, seen, seed, base))
                    events.setdefault(m.name, set()).update(n for k, n in seen if k == "event")
                    nodes.setdefault(m.name, set()).update(touched)
    keep, left, need = [], {}, set()
    for m in r.metrics:
        reason = left_out_reason(m.name, events[m.name], nodes[m.name], tree)
        if reason:
            left[m.name] = (m.area, reason)
            continue
        keep.append(m.name)
        need |= events[m.name]
    return keep, left, need


def model_bases(model):
    """The counts of every vector of the model, as the files hold them now."""
    bases = []
    for path in sorted(glob.glob("tests/vectors/*.json")):
        bases += [dict(v["counts"]) for v in json.load(open(path)) if v["model"] == model]
    return bases


def stable_plan(mod, model, retlat):
    """intel_plan() until what it reads no longer changes as the counts it asked for are added."""
    bases = model_bases(model)
    plan = intel_plan(mod, retlat, bases)
    for _ in range(4):
        for b in bases:
            for ev in plan[2] - set(b):
                b[ev] = new_count(model, ev, b["CPU_CLK_UNHALTED.THREAD"], False)
        again = intel_plan(mod, retlat, bases)
        if again == plan:
            break
        plan = again
    return plan


def intel_file(path, pmu_tools, report, plans):
    vectors = json.load(open(path))
    retlat = json.load(open(os.path.join(pmu_tools, "gnr-retlat.json")))["Data"]
    zeros = "-zeros" in path
    for vec in vectors:
        model = vec["model"]
        mod = load_toplev(os.path.join(pmu_tools, INTEL[model]))
        if model not in plans:
            plans[model] = stable_plan(mod, model, retlat)
        keep, left, events = plans[model]
        report.setdefault(model, (keep, left))
        counts = vec["counts"]
        cycles = counts["CPU_CLK_UNHALTED.THREAD"]
        for ev in sorted(events - set(counts)):
            counts[ev] = new_count(model, ev, cycles, zeros)
        set_times(vec, cycles)
        r = toplev_setup(mod, vec)
        out = {}
        for m in r.metrics:
            if m.name not in keep:
                continue
            m.compute(make_ev(counts, retlat, set()))
            out[m.name] = float(m.val)
        out["GHz"] = ghz(cycles, vec["cpu_s"])
        vec["metrics"] = out
    return vectors


# --- AMD: Linux perf's JSON -------------------------------------------------------------------

AMD = {"zen4": "amdzen4", "zen5": "amdzen5"}
AMD_CYCLES = "ls_not_halted_cyc"
# The PMC the kernel counts for each generic event on Zen 4 and family 0x1a
# (arch/x86/events/amd/core.c, amd_zen4_perfmon_event_map; stalled-cycles-frontend is PMCx0A9
# since Linux 6.9, commit c7b2edd8377b). stalled-cycles-backend has no entry: the kernel
# refuses it there.
KERNEL_GENERIC = {"cpu-cycles": 0x76, "cycles": 0x76, "instructions": 0xc0, "branches": 0xc2,
                  "branch-misses": 0xc3, "stalled-cycles-frontend": 0xa9,
                  "stalled-cycles-backend": None}
# perf's common metrics the issue asks for beside recommended.json: the Genoa stall rates.
COMMON = ("frontend_cycles_idle", "backend_cycles_idle")
# perf's expression words that are not events
FUNCS = {"d_ratio", "max", "min", "if", "else", "has_event", "duration_time"}
NAME_RE = re.compile(r"[A-Za-z_](?:[A-Za-z0-9_.]|\\[-=,])*")


def perf_json(path):
    with open(path) as f:
        return json.load(f)


def perf_model(arch, model):
    """perf's events (name: entry) and the metrics to consider, in perf's order."""
    d = os.path.join(arch, "x86", AMD[model])
    events = {}
    for path in sorted(glob.glob(os.path.join(d, "*.json"))):
        for e in perf_json(path):
            if "EventName" in e:
                events[e["EventName"]] = e
    metrics = [m for m in perf_json(os.path.join(d, "recommended.json")) if "MetricName" in m]
    common = perf_json(os.path.join(arch, "common", "common", "metrics.json"))
    metrics += [m for m in common if m["MetricName"] in COMMON]
    ipc = [m["MetricExpr"] for m in common if m["MetricName"] == "insn_per_cycle"][0]
    return events, metrics, ipc


def generic_event(events, code):
    """perf's name for the PMC the kernel counts (event code, no unit mask), or None."""
    for name, e in sorted(events.items()):
        if int(e["EventCode"], 16) == code and int(e.get("UMask", "0"), 16) == 0 \
                and "Unit" not in e:
            return name
    return None


def expr_names(expr):
    return [n for n in NAME_RE.findall(expr) if n not in FUNCS]


def amd_left_out_reason(m, events):
    if m.get("PerPkg") == "1":
        return "PerPkg: one count per package (%s), system-wide" % m.get("MetricGroup", "")
    unc = sorted({n for n in expr_names(m["MetricExpr"])
                  if n in events and "Unit" in events[n]})
    if unc:
        return "uncore events (perf's Unit %s): %s" % (events[unc[0]]["Unit"],
                                                        ", ".join(unc[:2]))
    for n in expr_names(m["MetricExpr"]):
        g = n.replace("\\", "")
        if g in KERNEL_GENERIC and KERNEL_GENERIC[g] is None:
            return "%s: the kernel maps no event on Zen 4 and family 0x1a" % g
    return None


def resolve(n, events):
    """perf's event name for an expression name: its own, or the generic event's PMC."""
    if n in events:
        return n
    g = n.replace("\\", "")
    code = KERNEL_GENERIC.get(g)
    name = generic_event(events, code) if code is not None else None
    if not name:
        raise SystemExit("%s: no core event in perf's files" % n)
    return name


def scale_unit(m):
    """perf's ScaleUnit: the factor it prints the value with, and the unit."""
    mo = re.match(r"([0-9.]+(?:e-?[0-9]+)?)(.*)", m.get("ScaleUnit", "1"))
    return float(mo.group(1)), mo.group(2)


def perf_eval(expr, counts, events):
    def d_ratio(a, b):
        return a / b if b else 0.0
    py = NAME_RE.sub(lambda mo: mo.group(0) if mo.group(0) in FUNCS
                     else "C[%r]" % resolve(mo.group(0), events), expr)
    try:
        return float(eval(py, {"d_ratio": d_ratio, "C": counts}))
    except ZeroDivisionError:
        return 0.0


def amd_plan(arch, model):
    """perf's events, the metrics cgtma has (with IPC: perf's insn_per_cycle, and CPI),
    those left out with the reason, and the events the kept ones read."""
    events, metrics, ipc = perf_model(arch, model)
    keep, left = [], {}
    for m in metrics:
        reason = amd_left_out_reason(m, events)
        if reason:
            left[m["MetricName"]] = (m.get("MetricGroup", ""), reason)
        else:
            keep.append((m["MetricName"], m["MetricExpr"], scale_unit(m)[0]))
    # CPI is cycles / instructions, the inverse of perf's insn_per_cycle
    keep += [("IPC", ipc, 1.0), ("CPI", "cpu\\-cycles / instructions", 1.0)]
    need = {resolve(n, events) for _, x, _ in keep for n in expr_names(x)}
    return events, keep, left, need


def amd_file(path, arch, report, plans):
    vectors = json.load(open(path))
    zeros = "-zeros" in path
    for vec in vectors:
        model = vec["model"]
        if model not in plans:
            plans[model] = amd_plan(arch, model)
        events, keep, left, need = plans[model]
        report.setdefault(model, ([name for name, _, _ in keep], left))
        counts = vec["counts"]
        cycles = counts[AMD_CYCLES]
        for ev in sorted(need - set(counts)):
            counts[ev] = new_count(model, ev, cycles, zeros)
        set_times(vec, cycles)
        out = {name: scale * perf_eval(x, counts, events) for name, x, scale in keep}
        out["GHz"] = ghz(cycles, vec["cpu_s"])
        vec["metrics"] = out
    return vectors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pmu-tools", help="pmu-tools checkout (commit 2568760f): the Intel files")
    ap.add_argument("--perf-arch", help="a Linux tree's tools/perf/pmu-events/arch: the AMD files")
    args = ap.parse_args()
    if not args.pmu_tools and not args.perf_arch:
        ap.error("give --pmu-tools, --perf-arch or both")
    report, plans = {}, {}
    for path in sorted(glob.glob("tests/vectors/*.json")):
        model = json.load(open(path))[0]["model"]
        if model in INTEL and args.pmu_tools:
            vectors = intel_file(path, args.pmu_tools, report, plans)
        elif model in AMD and args.perf_arch:
            vectors = amd_file(path, args.perf_arch, report, plans)
        else:
            continue
        with open(path, "w") as f:
            json.dump(vectors, f, indent=1, sort_keys=True)
            f.write("\n")
    for model, (keep, left) in sorted(report.items()):
        print("%s: %d metrics (and GHz); left out:" % (model, len(keep)))
        for name, (area, why) in sorted(left.items()):
            print("  %-32s %-22s %s" % (name, area, why))


if __name__ == "__main__":
    main()
