#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes tests/vectors/neoverse-*.json: the Neoverse models' expected node values, computed
from Linux perf's own expressions (tools/perf/pmu-events/arch/arm64/arm/neoverse-*/metrics.json
and arm64/sbsa.json), transcribed below as perf writes them: percent, `#slots`, perf's
`X if C else Y` for the N2 revision test. Nothing here reads cgtma's model files.

perf's value / 100 is cgtma's fraction. A formula with a zero divisor anywhere is NaN in
perf; cgtma reports 0 for it (docs/arm64.md), and so do these vectors.

Run from the repository root: python3 tests/vectors/neoverse.py
"""
import json
import re

# TopdownL1 as perf writes it. W: #slots (caps/slots, or cgtma's width).
V1 = {
    "Frontend_Bound": "(100 * ((STALL_SLOT_FRONTEND / (CPU_CYCLES * 8)) - ((BR_MIS_PRED * 4) / CPU_CYCLES)))",
    "Bad_Speculation": "(100 * (((1 - (OP_RETIRED / OP_SPEC)) * (1 - (STALL_SLOT / (CPU_CYCLES * 8)))) + ((BR_MIS_PRED * 4) / CPU_CYCLES)))",
    "Backend_Bound": "100 * (STALL_SLOT_BACKEND / (#slots * CPU_CYCLES))",
    "Retiring": "100 * (OP_RETIRED / OP_SPEC * (1 - STALL_SLOT / (#slots * CPU_CYCLES)))",
}
# N2 and V2 (one file): the revision test, written as perf has it
TEST = "(strcmp_cpuid_str(0x410fd493) | strcmp_cpuid_str(0x410fd490) ^ 1)"
N2 = {
    "Frontend_Bound": "100 * ((STALL_SLOT_FRONTEND if " + TEST + " else STALL_SLOT_FRONTEND - CPU_CYCLES) / (CPU_CYCLES * #slots) - BR_MIS_PRED / CPU_CYCLES)",
    "Bad_Speculation": "100 * ((1 - OP_RETIRED / OP_SPEC) * (1 - (STALL_SLOT if " + TEST + " else STALL_SLOT - CPU_CYCLES) / (CPU_CYCLES * #slots)) + BR_MIS_PRED * 4 / CPU_CYCLES)",
    "Backend_Bound": "100 * (STALL_SLOT_BACKEND / (CPU_CYCLES * #slots) - BR_MIS_PRED * 3 / CPU_CYCLES)",
    "Retiring": "100 * (OP_RETIRED / OP_SPEC * (1 - (STALL_SLOT if " + TEST + " else STALL_SLOT - CPU_CYCLES) / (CPU_CYCLES * #slots)))",
}
def n3(k):
    return {
        "Frontend_Bound": "(STALL_SLOT_FRONTEND / (%d * CPU_CYCLES) - STALL_FRONTEND_FLUSH / CPU_CYCLES) * 100" % k,
        "Frontend_Bound.FE_Core_Bound": "STALL_FRONTEND_CPUBOUND / STALL_FRONTEND * 100",
        "Frontend_Bound.FE_Core_Bound.FE_Flush_Bound": "STALL_FRONTEND_FLUSH / STALL_FRONTEND_CPUBOUND * 100",
        "Frontend_Bound.FE_Core_Bound.FE_Flow_Bound": "STALL_FRONTEND_FLOW / STALL_FRONTEND_CPUBOUND * 100",
        "Frontend_Bound.FE_Memory_Bound": "STALL_FRONTEND_MEMBOUND / STALL_FRONTEND * 100",
        "Frontend_Bound.FE_Memory_Bound.FE_Cache_Bound": "(STALL_FRONTEND_L1I + STALL_FRONTEND_MEM) / STALL_FRONTEND_MEMBOUND * 100",
        "Frontend_Bound.FE_Memory_Bound.FE_Cache_Bound.L1I_Bound": "STALL_FRONTEND_L1I / (STALL_FRONTEND_L1I + STALL_FRONTEND_MEM) * 100",
        "Frontend_Bound.FE_Memory_Bound.FE_Cache_Bound.L2I_Bound": "STALL_FRONTEND_MEM / (STALL_FRONTEND_L1I + STALL_FRONTEND_MEM) * 100",
        "Frontend_Bound.FE_Memory_Bound.FE_TLB_Bound": "STALL_FRONTEND_TLB / STALL_FRONTEND_MEMBOUND * 100",
        "Bad_Speculation": "(1 - STALL_SLOT / (%d * CPU_CYCLES)) * (1 - OP_RETIRED / OP_SPEC) * 100 + STALL_FRONTEND_FLUSH / CPU_CYCLES * 100" % k,
        "Backend_Bound": "100 * (STALL_SLOT_BACKEND / (#slots * CPU_CYCLES))",
        "Backend_Bound.Core_Bound": "STALL_BACKEND_CPUBOUND / STALL_BACKEND * 100",
        "Backend_Bound.Core_Bound.Rename_Bound": "STALL_BACKEND_RENAME / STALL_BACKEND_CPUBOUND * 100",
        "Backend_Bound.Memory_Bound": "STALL_BACKEND_MEMBOUND / STALL_BACKEND * 100",
        "Backend_Bound.Memory_Bound.Cache_Bound": "(STALL_BACKEND_L1D + STALL_BACKEND_MEM) / STALL_BACKEND_MEMBOUND * 100",
        "Backend_Bound.Memory_Bound.Cache_Bound.L1D_Bound": "STALL_BACKEND_L1D / (STALL_BACKEND_L1D + STALL_BACKEND_MEM) * 100",
        "Backend_Bound.Memory_Bound.Cache_Bound.L2D_Bound": "STALL_BACKEND_MEM / (STALL_BACKEND_L1D + STALL_BACKEND_MEM) * 100",
        "Backend_Bound.Memory_Bound.TLB_Bound": "STALL_BACKEND_TLB / STALL_BACKEND_MEMBOUND * 100",
        "Backend_Bound.Memory_Bound.Store_Bound": "STALL_BACKEND_ST / STALL_BACKEND_MEMBOUND * 100",
        "Backend_Bound.Busy_Bound": "STALL_BACKEND_BUSY / STALL_BACKEND * 100",
        "Retiring": "100 * (OP_RETIRED / OP_SPEC * (1 - STALL_SLOT / (#slots * CPU_CYCLES)))",
    }
N1 = {  # Cycle_Accounting
    "Frontend_Stalled_Cycles": "((STALL_FRONTEND / CPU_CYCLES) * 100)",
    "Backend_Stalled_Cycles": "((STALL_BACKEND / CPU_CYCLES) * 100)",
}


def strcmp_cpuid_str(midr, cpu):
    """perf's arm64 strcmp_cpuid_str: 1 when the CPU has midr's implementer, architecture and
    part at midr's (variant, revision) or later, else 0 (NaN when the MIDR is unknown)."""
    if cpu is None:
        return float("nan")
    same = lambda m: (m >> 24, m >> 16 & 0xf, m >> 4 & 0xfff)
    rev = lambda m: (m >> 20 & 0xf, m & 0xf)
    return int(same(cpu) == same(midr) and rev(cpu) >= rev(midr))


def evaluate(expr, counts, slots, midr):
    e = expr if slots is None else expr.replace("#slots", repr(float(slots)))
    e = re.sub(r"strcmp_cpuid_str\((0x[0-9a-f]+)\)",
               lambda mo: "S(%s)" % mo.group(1), e)
    # perf: `|` below `^`; both on 0/1 (NaN: `if` takes it as true, no correction)
    def S(m):
        return strcmp_cpuid_str(m, midr)
    e = re.sub(r"\b([A-Z][A-Z0-9_]+)\b", lambda mo: "C[%r]" % mo.group(1), e)
    e = e.replace(" | ", " or ").replace(" ^ 1", " == 0")
    try:
        v = eval(e, {"S": S, "C": counts, "nan": float("nan")})
    except ZeroDivisionError:
        return 0.0
    return v / 100


def vector(model, table, counts, slots, midr=None, note=""):
    v = {"model": model, "note": note, "counts": counts,
         "expected": {n: {"value": evaluate(x, counts, slots, midr)} for n, x in table.items()}}
    if midr is not None:
        v["cpu_part"] = midr >> 4 & 0xfff
        v["cpu_revision"] = (midr >> 20 & 0xf) * 16 + (midr & 0xf)
    if slots is not None:
        v["slots"] = slots
    return v


L1 = {"CPU_CYCLES": 1000000000.0, "STALL_SLOT_FRONTEND": 1400000000.0,
      "STALL_SLOT_BACKEND": 2300000000.0, "STALL_SLOT": 3700000000.0,
      "OP_RETIRED": 3100000000.0, "OP_SPEC": 3600000000.0, "BR_MIS_PRED": 9000000.0}
L1B = {"CPU_CYCLES": 735120311.0, "STALL_SLOT_FRONTEND": 412008765.0,
       "STALL_SLOT_BACKEND": 2801133440.0, "STALL_SLOT": 3213142205.0,
       "OP_RETIRED": 2310040112.0, "OP_SPEC": 2411922867.0, "BR_MIS_PRED": 1203317.0}
ZERO_OPS = dict(L1, OP_RETIRED=0.0, OP_SPEC=0.0)
DEEP = {"STALL_FRONTEND_FLUSH": 21000000.0, "STALL_FRONTEND": 310000000.0,
        "STALL_FRONTEND_CPUBOUND": 120000000.0, "STALL_FRONTEND_FLOW": 64000000.0,
        "STALL_FRONTEND_MEMBOUND": 190000000.0, "STALL_FRONTEND_L1I": 71000000.0,
        "STALL_FRONTEND_MEM": 58000000.0, "STALL_FRONTEND_TLB": 23000000.0,
        "STALL_BACKEND": 520000000.0, "STALL_BACKEND_CPUBOUND": 140000000.0,
        "STALL_BACKEND_RENAME": 33000000.0, "STALL_BACKEND_MEMBOUND": 350000000.0,
        "STALL_BACKEND_L1D": 120000000.0, "STALL_BACKEND_MEM": 150000000.0,
        "STALL_BACKEND_TLB": 41000000.0, "STALL_BACKEND_ST": 27000000.0,
        "STALL_BACKEND_BUSY": 190000000.0}
n3l1 = {k: v for k, v in L1.items() if k != "BR_MIS_PRED"}
NO_BACKEND = dict(DEEP, STALL_BACKEND=0.0, STALL_BACKEND_CPUBOUND=0.0, STALL_BACKEND_MEMBOUND=0.0,
                  STALL_BACKEND_BUSY=0.0)
files = {
    "neoverse-v1": [vector("neoverse-v1", V1, L1, 8, note="width 8"),
                    vector("neoverse-v1", V1, L1B, 6, note="#slots 6 (--slots 6): only where perf writes #slots"),
                    vector("neoverse-v1", V1, ZERO_OPS, 8, note="OP_SPEC 0: Bad_Speculation and Retiring 0")],
    "neoverse-n2": [vector("neoverse-n2", N2, L1, 5, note="no MIDR (offline): counts as they are"),
                    vector("neoverse-n2", N2, L1B, 5, 0x410fd492, "N2 r0p2: one slot per cycle off STALL_SLOT(_FRONTEND)"),
                    vector("neoverse-n2", N2, L1B, 5, 0x410fd493, "N2 r0p3: no correction"),
                    vector("neoverse-n2", N2, L1B, 5, 0x411fd490, "N2 r1p0: no correction"),
                    vector("neoverse-n2", N2, L1B, 5, 0x410fd4f0, "V2's part with N2's file: no correction")],
    "neoverse-v2": [vector("neoverse-v2", N2, L1, 8, note="width 8"),
                    vector("neoverse-v2", N2, L1B, 8, 0x410fd4f1, "V2 r0p1: no correction")],
    "neoverse-n3": [vector("neoverse-n3", n3(5), dict(n3l1, **DEEP), 5, note="levels 1-4"),
                    vector("neoverse-n3", n3(5), dict(n3l1, **NO_BACKEND), 4, note="STALL_BACKEND 0: its children 0; #slots 4")],
    "neoverse-v3": [vector("neoverse-v3", n3(10), dict(n3l1, **DEEP), 10, note="levels 1-4"),
                    vector("neoverse-v3", n3(10), dict(n3l1, OP_RETIRED=0.0, OP_SPEC=0.0, **DEEP), 10, note="OP_SPEC 0: Bad_Speculation 0 despite its flush term")],
    "neoverse-n1": [vector("neoverse-n1", N1, {"CPU_CYCLES": 1000000000.0, "STALL_FRONTEND": 180000000.0,
                                                "STALL_BACKEND": 420000000.0, "INST_RETIRED": 1700000000.0}, None),
                    vector("neoverse-n1", N1, {"CPU_CYCLES": 0.0, "STALL_FRONTEND": 5.0,
                                                "STALL_BACKEND": 0.0, "INST_RETIRED": 0.0}, None,
                           note="no cycles: 0 (perf: NaN)")],
}
for name, vecs in files.items():
    with open("tests/vectors/%s.json" % name, "w") as f:
        json.dump(vecs, f, indent=1, sort_keys=True)
        f.write("\n")
