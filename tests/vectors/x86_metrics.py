#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Adds the flat metrics to the Intel vectors (tests/vectors/{skx,icx,spr,gnr}*.json): the
expected value of every metric of the model, computed by toplev's own code, never from cgtma's
model files.

pmu-tools' model files (PMU_TOOLS/{skx,icx,spr,gnr}_server_ratios.py) are imported and run as
toplev runs them: each Metric_* object's compute() with the vector's counts (toplev's EV),
toplev's error rule (a division by zero makes the metric 0), Granite Rapids' retire
latencies from PMU_TOOLS/gnr-retlat.json (MEAN). toplev's metrics that cgtma cannot count
are left out by the rules of left_out_reason(), from what each metric reads, and printed
with the reason. IPC and CPI are toplev's; GHz = cycles / cpu_s / 1e9 is cgtma's own.

Counts: the vectors' own, plus, for events only metrics read, a count drawn from a hash of
the model and event name (a share of the vector's cycles; in the -zeros files about a third
are 0, so that metrics divide by zero). interval_s and cpu_s are set in every vector.

Run from the repository root, with pmu-tools at commit 2568760f (not committed here):
  python3 tests/vectors/x86_metrics.py PMU_TOOLS_DIR
"""
import glob
import hashlib
import importlib.util
import json
import os
import sys

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
    # a busy CPU time that puts the frequency between 1.6 and 3.6 GHz; 0.4 s without cycles
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


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    pmu_tools = sys.argv[1]
    report, plans = {}, {}
    for path in sorted(glob.glob("tests/vectors/*.json")):
        model = json.load(open(path))[0]["model"]
        if model not in INTEL:
            continue
        vectors = intel_file(path, pmu_tools, report, plans)
        with open(path, "w") as f:
            json.dump(vectors, f, indent=1, sort_keys=True)
            f.write("\n")
    for model, (keep, left) in sorted(report.items()):
        print("%s: %d metrics (and GHz); left out:" % (model, len(keep)))
        for name, (area, why) in sorted(left.items()):
            print("  %-32s %-22s %s" % (name, area, why))


if __name__ == "__main__":
    main()
