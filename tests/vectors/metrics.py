#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Adds the default metrics to every vector of tests/vectors/*.json: IPC, CPI and GHz, computed
from the sources' own formulas (below), never from cgtma's model files.

- Intel, toplev (pmu-tools' *_ratios.py): IPC = INST_RETIRED.ANY / CLKS, CLKS =
  CPU_CLK_UNHALTED.THREAD; CPI = 1 / IPC.
- AMD, Linux perf: `instructions` / `cycles`, which the kernel's amd PMU opens as event 0xc0
  (ex_ret_instr) and 0x76 (ls_not_halted_cyc); CPI the inverse.
- Arm, Linux perf's arm64 `ipc`: INST_RETIRED / CPU_CYCLES; CPI the inverse.
- GHz, on all: cycles / cpu_s / 1e9 (perf stat's "GHz": cycles over the CPU time the task
  ran), cpu_s the scope's busy CPU time, a key of the vector.

A division by zero gives 0, as toplev's metrics and cgtma's give. A vector without an
instructions count gets one (cycles times a ratio that varies from vector to vector), and one
without cpu_s gets a time; both are test inputs. A vector's other metrics (neoverse.py's: perf's
Arm metrics) are kept. Idempotent: run it after neoverse.py, from the repository root:
python3 tests/vectors/metrics.py
"""
import glob
import json

EVENTS = {  # vendor family: (instructions, cycles)
    "intel": ("INST_RETIRED.ANY", "CPU_CLK_UNHALTED.THREAD"),
    "amd": ("ex_ret_instr", "ls_not_halted_cyc"),
    "arm": ("INST_RETIRED", "CPU_CYCLES"),
}
FAMILY = {"skx": "intel", "icx": "intel", "spr": "intel", "gnr": "intel",
          "zen4": "amd", "zen5": "amd"}
IPC_INPUT = [0.65, 0.27, 1.9, 1.2, 3.4]   # the uperf intervals first
CPU_S = [1.0, 0.75, 1.5, 0.5, 2.0]


def div(a, b):
    return a / b if b else 0.0


for path in sorted(glob.glob("tests/vectors/*.json")):
    with open(path) as f:
        vectors = json.load(f)
    for k, v in enumerate(vectors):
        fam = FAMILY.get(v["model"], "arm" if v["model"].startswith("neoverse") else None)
        ins, cyc = EVENTS[fam]
        counts = v["counts"]
        if ins not in counts:
            counts[ins] = float(round(counts[cyc] * IPC_INPUT[k % len(IPC_INPUT)]))
        v.setdefault("cpu_s", CPU_S[k % len(CPU_S)])
        ipc = div(counts[ins], counts[cyc])
        cpi = div(1.0, ipc) if fam == "intel" else div(counts[cyc], counts[ins])
        v.setdefault("metrics", {}).update(
            {"IPC": ipc, "CPI": cpi, "GHz": div(div(counts[cyc], v["cpu_s"]), 1e9)})
    with open(path, "w") as f:
        json.dump(vectors, f, indent=1, sort_keys=True)
        f.write("\n")
