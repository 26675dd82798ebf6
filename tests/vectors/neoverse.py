#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes tests/vectors/neoverse-*.json: the Neoverse models' expected node and metric values,
computed from Linux perf's own expressions (tools/perf/pmu-events/arch/arm64/arm/neoverse-*/
metrics.json and arm64/sbsa.json, mainline 2025), transcribed below as perf writes them:
percent, `#slots`, perf's `X if C else Y` for the N2 revision test, each flat metric's
MetricExpr and ScaleUnit. Nothing here reads cgtma's model files.

Nodes: perf's value / 100 is cgtma's fraction. Flat metrics: the value perf prints, the
MetricExpr times its ScaleUnit's factor, in the ScaleUnit's words. perf's `ipc` is cgtma's
default IPC; CPI (cycles / instructions) and GHz (cycles / cpu_s / 1e9) are the defaults every
model with instructions and cycles has. A formula with a zero divisor anywhere is NaN in
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

# The flat metrics, each as perf writes it: (MetricName, MetricExpr, MetricGroup, ScaleUnit).
# The TopdownL1 and Topdown_Frontend/Topdown_Backend entries are the trees above.
# neoverse-n1/metrics.json; neoverse-v1/metrics.json has the same entries beside TopdownL1.
N1_V1_METRICS = [
    ("backend_stalled_cycles", "((STALL_BACKEND / CPU_CYCLES) * 100)", "Cycle_Accounting",
     "1percent of cycles"),
    ("branch_misprediction_ratio", "(BR_MIS_PRED_RETIRED / BR_RETIRED)",
     "Miss_Ratio;Branch_Effectiveness", "1per branch"),
    ("branch_mpki", "((BR_MIS_PRED_RETIRED / INST_RETIRED) * 1000)",
     "MPKI;Branch_Effectiveness", "1MPKI"),
    ("branch_percentage", "(((BR_IMMED_SPEC + BR_INDIRECT_SPEC) / INST_SPEC) * 100)",
     "Operation_Mix", "1percent of operations"),
    ("crypto_percentage", "((CRYPTO_SPEC / INST_SPEC) * 100)", "Operation_Mix",
     "1percent of operations"),
    ("dtlb_mpki", "((DTLB_WALK / INST_RETIRED) * 1000)", "MPKI;DTLB_Effectiveness", "1MPKI"),
    ("dtlb_walk_ratio", "(DTLB_WALK / L1D_TLB)", "Miss_Ratio;DTLB_Effectiveness",
     "1per TLB access"),
    ("frontend_stalled_cycles", "((STALL_FRONTEND / CPU_CYCLES) * 100)", "Cycle_Accounting",
     "1percent of cycles"),
    ("integer_dp_percentage", "((DP_SPEC / INST_SPEC) * 100)", "Operation_Mix",
     "1percent of operations"),
    ("ipc", "(INST_RETIRED / CPU_CYCLES)", "General", "1per cycle"),
    ("itlb_mpki", "((ITLB_WALK / INST_RETIRED) * 1000)", "MPKI;ITLB_Effectiveness", "1MPKI"),
    ("itlb_walk_ratio", "(ITLB_WALK / L1I_TLB)", "Miss_Ratio;ITLB_Effectiveness",
     "1per TLB access"),
    ("l1d_cache_miss_ratio", "(L1D_CACHE_REFILL / L1D_CACHE)",
     "Miss_Ratio;L1D_Cache_Effectiveness", "1per cache access"),
    ("l1d_cache_mpki", "((L1D_CACHE_REFILL / INST_RETIRED) * 1000)",
     "MPKI;L1D_Cache_Effectiveness", "1MPKI"),
    ("l1d_tlb_miss_ratio", "(L1D_TLB_REFILL / L1D_TLB)", "Miss_Ratio;DTLB_Effectiveness",
     "1per TLB access"),
    ("l1d_tlb_mpki", "((L1D_TLB_REFILL / INST_RETIRED) * 1000)", "MPKI;DTLB_Effectiveness",
     "1MPKI"),
    ("l1i_cache_miss_ratio", "(L1I_CACHE_REFILL / L1I_CACHE)",
     "Miss_Ratio;L1I_Cache_Effectiveness", "1per cache access"),
    ("l1i_cache_mpki", "((L1I_CACHE_REFILL / INST_RETIRED) * 1000)",
     "MPKI;L1I_Cache_Effectiveness", "1MPKI"),
    ("l1i_tlb_miss_ratio", "(L1I_TLB_REFILL / L1I_TLB)", "Miss_Ratio;ITLB_Effectiveness",
     "1per TLB access"),
    ("l1i_tlb_mpki", "((L1I_TLB_REFILL / INST_RETIRED) * 1000)", "MPKI;ITLB_Effectiveness",
     "1MPKI"),
    ("l2_cache_miss_ratio", "(L2D_CACHE_REFILL / L2D_CACHE)",
     "Miss_Ratio;L2_Cache_Effectiveness", "1per cache access"),
    ("l2_cache_mpki", "((L2D_CACHE_REFILL / INST_RETIRED) * 1000)",
     "MPKI;L2_Cache_Effectiveness", "1MPKI"),
    ("l2_tlb_miss_ratio", "(L2D_TLB_REFILL / L2D_TLB)",
     "Miss_Ratio;ITLB_Effectiveness;DTLB_Effectiveness", "1per TLB access"),
    ("l2_tlb_mpki", "((L2D_TLB_REFILL / INST_RETIRED) * 1000)",
     "MPKI;ITLB_Effectiveness;DTLB_Effectiveness", "1MPKI"),
    ("ll_cache_read_hit_ratio", "((LL_CACHE_RD - LL_CACHE_MISS_RD) / LL_CACHE_RD)",
     "LL_Cache_Effectiveness", "1per cache access"),
    ("ll_cache_read_miss_ratio", "(LL_CACHE_MISS_RD / LL_CACHE_RD)",
     "Miss_Ratio;LL_Cache_Effectiveness", "1per cache access"),
    ("ll_cache_read_mpki", "((LL_CACHE_MISS_RD / INST_RETIRED) * 1000)",
     "MPKI;LL_Cache_Effectiveness", "1MPKI"),
    ("load_percentage", "((LD_SPEC / INST_SPEC) * 100)", "Operation_Mix",
     "1percent of operations"),
    ("scalar_fp_percentage", "((VFP_SPEC / INST_SPEC) * 100)", "Operation_Mix",
     "1percent of operations"),
    ("simd_percentage", "((ASE_SPEC / INST_SPEC) * 100)", "Operation_Mix",
     "1percent of operations"),
    ("store_percentage", "((ST_SPEC / INST_SPEC) * 100)", "Operation_Mix",
     "1percent of operations"),
]
# Entries that neoverse-n2-v2, neoverse-n3 and neoverse-v3/metrics.json write alike
SHARED_N2_N3_V3 = [
    ("backend_stalled_cycles", "STALL_BACKEND / CPU_CYCLES * 100", "Cycle_Accounting",
     "1percent of cycles"),
    ("branch_misprediction_ratio", "BR_MIS_PRED_RETIRED / BR_RETIRED",
     "Miss_Ratio;Branch_Effectiveness", "100percent of branches"),
    ("branch_mpki", "BR_MIS_PRED_RETIRED / INST_RETIRED * 1000", "MPKI;Branch_Effectiveness",
     "1MPKI"),
    ("crypto_percentage", "CRYPTO_SPEC / INST_SPEC * 100", "Operation_Mix",
     "1percent of operations"),
    ("dtlb_mpki", "DTLB_WALK / INST_RETIRED * 1000", "MPKI;DTLB_Effectiveness", "1MPKI"),
    ("dtlb_walk_ratio", "DTLB_WALK / L1D_TLB", "Miss_Ratio;DTLB_Effectiveness",
     "100percent of TLB accesses"),
    ("frontend_stalled_cycles", "STALL_FRONTEND / CPU_CYCLES * 100", "Cycle_Accounting",
     "1percent of cycles"),
    ("ipc", "INST_RETIRED / CPU_CYCLES", "General", "1per cycle"),
    ("itlb_mpki", "ITLB_WALK / INST_RETIRED * 1000", "MPKI;ITLB_Effectiveness", "1MPKI"),
    ("itlb_walk_ratio", "ITLB_WALK / L1I_TLB", "Miss_Ratio;ITLB_Effectiveness",
     "100percent of TLB accesses"),
    ("l1d_cache_miss_ratio", "L1D_CACHE_REFILL / L1D_CACHE", "Miss_Ratio;L1D_Cache_Effectiveness",
     "100percent of cache accesses"),
    ("l1d_cache_mpki", "L1D_CACHE_REFILL / INST_RETIRED * 1000", "MPKI;L1D_Cache_Effectiveness",
     "1MPKI"),
    ("l1d_tlb_miss_ratio", "L1D_TLB_REFILL / L1D_TLB", "Miss_Ratio;DTLB_Effectiveness",
     "100percent of TLB accesses"),
    ("l1d_tlb_mpki", "L1D_TLB_REFILL / INST_RETIRED * 1000", "MPKI;DTLB_Effectiveness", "1MPKI"),
    ("l1i_cache_miss_ratio", "L1I_CACHE_REFILL / L1I_CACHE", "Miss_Ratio;L1I_Cache_Effectiveness",
     "100percent of cache accesses"),
    ("l1i_cache_mpki", "L1I_CACHE_REFILL / INST_RETIRED * 1000", "MPKI;L1I_Cache_Effectiveness",
     "1MPKI"),
    ("l1i_tlb_miss_ratio", "L1I_TLB_REFILL / L1I_TLB", "Miss_Ratio;ITLB_Effectiveness",
     "100percent of TLB accesses"),
    ("l1i_tlb_mpki", "L1I_TLB_REFILL / INST_RETIRED * 1000", "MPKI;ITLB_Effectiveness", "1MPKI"),
    ("l2_cache_miss_ratio", "L2D_CACHE_REFILL / L2D_CACHE", "Miss_Ratio;L2_Cache_Effectiveness",
     "100percent of cache accesses"),
    ("l2_cache_mpki", "L2D_CACHE_REFILL / INST_RETIRED * 1000", "MPKI;L2_Cache_Effectiveness",
     "1MPKI"),
    ("l2_tlb_miss_ratio", "L2D_TLB_REFILL / L2D_TLB",
     "Miss_Ratio;ITLB_Effectiveness;DTLB_Effectiveness", "100percent of TLB accesses"),
    ("l2_tlb_mpki", "L2D_TLB_REFILL / INST_RETIRED * 1000",
     "MPKI;ITLB_Effectiveness;DTLB_Effectiveness", "1MPKI"),
    ("ll_cache_read_hit_ratio", "(LL_CACHE_RD - LL_CACHE_MISS_RD) / LL_CACHE_RD",
     "LL_Cache_Effectiveness", "100percent of cache accesses"),
    ("ll_cache_read_miss_ratio", "LL_CACHE_MISS_RD / LL_CACHE_RD",
     "Miss_Ratio;LL_Cache_Effectiveness", "100percent of cache accesses"),
    ("ll_cache_read_mpki", "LL_CACHE_MISS_RD / INST_RETIRED * 1000",
     "MPKI;LL_Cache_Effectiveness", "1MPKI"),
    ("load_percentage", "LD_SPEC / INST_SPEC * 100", "Operation_Mix", "1percent of operations"),
    ("scalar_fp_percentage", "VFP_SPEC / INST_SPEC * 100", "Operation_Mix",
     "1percent of operations"),
    ("simd_percentage", "ASE_SPEC / INST_SPEC * 100", "Operation_Mix", "1percent of operations"),
    ("store_percentage", "ST_SPEC / INST_SPEC * 100", "Operation_Mix", "1percent of operations"),
    ("sve_all_percentage", "SVE_INST_SPEC / INST_SPEC * 100", "Operation_Mix",
     "1percent of operations"),
]
# N2, V2 and V3 write these two alike; N3 has its own (below)
MIX_N2_V3 = [
    ("branch_percentage", "(BR_IMMED_SPEC + BR_INDIRECT_SPEC) / INST_SPEC * 100",
     "Operation_Mix", "1percent of operations"),
    ("integer_dp_percentage", "DP_SPEC / INST_SPEC * 100", "Operation_Mix",
     "1percent of operations"),
]
MIX_N3 = [
    ("branch_percentage", "PC_WRITE_SPEC / INST_SPEC * 100", "Operation_Mix",
     "1percent of operations"),
    ("integer_dp_percentage", "(DP_SPEC - DSB_SPEC) / INST_SPEC * 100", "Operation_Mix",
     "1percent of operations"),
]
# neoverse-n2-v2/metrics.json's own
N2_V2_ONLY = [
    ("l3d_cache_mpki", "L3D_CACHE_REFILL / INST_RETIRED * 1000", "MPKI;L3_Cache_Effectiveness",
     "1MPKI"),
    ("l3d_cache_miss_rate", "L3D_CACHE_REFILL / L3D_CACHE", "Miss_Ratio;L3_Cache_Effectiveness",
     "100%"),
    ("branch_pki", "BR_RETIRED / INST_RETIRED * 1000", "MPKI;Branch_Effectiveness", "1PKI"),
    ("ipc_rate", "ipc / #slots", "General", "100%"),
    ("spec_ipc", "INST_SPEC / CPU_CYCLES", "General", None),
    ("retired_rate", "OP_RETIRED / OP_SPEC", "General", "100%"),
    ("wasted_rate", "1 - OP_RETIRED / OP_SPEC", "General", "100%"),
    ("branch_immed_spec_rate", "BR_IMMED_SPEC / INST_SPEC", "Operation_Mix", "100%"),
    ("branch_return_spec_rate", "BR_RETURN_SPEC / INST_SPEC", "Operation_Mix", "100%"),
    ("branch_indirect_spec_rate", "BR_INDIRECT_SPEC / INST_SPEC", "Operation_Mix", "100%"),
]
# neoverse-n3 and neoverse-v3/metrics.json's own
N3_V3_ONLY = [
    ("barrier_percentage", "(ISB_SPEC + DSB_SPEC + DMB_SPEC) / INST_SPEC * 100",
     "Operation_Mix", "1percent of operations"),
    ("branch_direct_ratio", "BR_IMMED_RETIRED / BR_RETIRED", "Branch_Effectiveness",
     "1per branch"),
    ("branch_indirect_ratio", "BR_IND_RETIRED / BR_RETIRED", "Branch_Effectiveness",
     "1per branch"),
    ("branch_return_ratio", "BR_RETURN_RETIRED / BR_RETIRED", "Branch_Effectiveness",
     "1per branch"),
    ("fp16_percentage", "FP_HP_SPEC / INST_SPEC * 100", "FP_Precision_Mix",
     "1percent of operations"),
    ("fp32_percentage", "FP_SP_SPEC / INST_SPEC * 100", "FP_Precision_Mix",
     "1percent of operations"),
    ("fp64_percentage", "FP_DP_SPEC / INST_SPEC * 100", "FP_Precision_Mix",
     "1percent of operations"),
    ("fp_ops_per_cycle", "(FP_SCALE_OPS_SPEC + FP_FIXED_OPS_SPEC) / CPU_CYCLES",
     "FP_Arithmetic_Intensity", "1operations per cycle"),
    ("nonsve_fp_ops_per_cycle", "FP_FIXED_OPS_SPEC / CPU_CYCLES", "FP_Arithmetic_Intensity",
     "1operations per cycle"),
    ("sve_fp_ops_per_cycle", "FP_SCALE_OPS_SPEC / CPU_CYCLES", "FP_Arithmetic_Intensity",
     "1operations per cycle"),
    ("sve_predicate_empty_percentage", "SVE_PRED_EMPTY_SPEC / SVE_PRED_SPEC * 100",
     "SVE_Effectiveness", "1percent of operations"),
    ("sve_predicate_full_percentage", "SVE_PRED_FULL_SPEC / SVE_PRED_SPEC * 100",
     "SVE_Effectiveness", "1percent of operations"),
    ("sve_predicate_partial_percentage", "SVE_PRED_PARTIAL_SPEC / SVE_PRED_SPEC * 100",
     "SVE_Effectiveness", "1percent of operations"),
    ("sve_predicate_percentage", "SVE_PRED_SPEC / INST_SPEC * 100", "SVE_Effectiveness",
     "1percent of operations"),
]
N2_V2_METRICS = SHARED_N2_N3_V3 + MIX_N2_V3 + N2_V2_ONLY
N3_METRICS = SHARED_N2_N3_V3 + MIX_N3 + N3_V3_ONLY
V3_METRICS = SHARED_N2_N3_V3 + MIX_N2_V3 + N3_V3_ONLY


def strcmp_cpuid_str(midr, cpu):
    """perf's arm64 strcmp_cpuid_str: 1 when the CPU has midr's implementer, architecture and
    part at midr's (variant, revision) or later, else 0 (NaN when the MIDR is unknown)."""
    if cpu is None:
        return float("nan")
    same = lambda m: (m >> 24, m >> 16 & 0xf, m >> 4 & 0xfff)
    rev = lambda m: (m >> 20 & 0xf, m & 0xf)
    return int(same(cpu) == same(midr) and rev(cpu) >= rev(midr))


def perf_eval(expr, counts, slots, midr, metrics=None):
    """expr's value as perf computes it; ZeroDivisionError where perf gets NaN"""
    e = expr if slots is None else expr.replace("#slots", repr(float(slots)))
    e = re.sub(r"strcmp_cpuid_str\((0x[0-9a-f]+)\)",
               lambda mo: "S(%s)" % mo.group(1), e)
    # perf: `|` below `^`; both on 0/1 (NaN: `if` takes it as true, no correction)
    def S(m):
        return strcmp_cpuid_str(m, midr)
    e = re.sub(r"\b([A-Z][A-Z0-9_]+)\b", lambda mo: "C[%r]" % mo.group(1), e)
    # a metric naming another (ipc_rate: `ipc / #slots`)
    e = re.sub(r"\b([a-z][a-z0-9_]*)\b",
               lambda mo: "M[%r]" % mo.group(1) if mo.group(1) in (metrics or {}) else mo.group(1), e)
    e = e.replace(" | ", " or ").replace(" ^ 1", " == 0")
    return eval(e, {"S": S, "C": counts, "M": metrics, "nan": float("nan")})


def evaluate(expr, counts, slots, midr):
    try:
        return perf_eval(expr, counts, slots, midr) / 100
    except ZeroDivisionError:
        return 0.0


def scale_unit(su):
    """perf's ScaleUnit: the factor perf multiplies by, and the unit it prints"""
    if su is None:
        return 1.0, ""
    mo = re.match(r"([0-9.]+)(.*)", su)
    return float(mo.group(1)), mo.group(2).strip()


def flat_metrics(table, counts, slots, midr, cpu_s):
    """What perf prints for each of table's metrics, and its unit, under cgtma's names (perf's
    ipc is IPC), then the defaults CPI and GHz; a metric whose formula divides by 0 is 0."""
    raw, values, units = {}, {}, {}

    def put(name, factor, unit, fn):
        try:
            raw[name] = fn()
        except ZeroDivisionError:
            raw[name] = 0.0
        values[name], units[name] = raw[name] * factor, unit

    for name, expr, _, su in table:
        factor, unit = scale_unit(su)
        put(name, factor, unit, lambda: perf_eval(expr, counts, slots, midr, raw))
    values["IPC"], units["IPC"] = values.pop("ipc"), ""
    del units["ipc"]
    put("CPI", 1.0, "", lambda: counts["CPU_CYCLES"] / counts["INST_RETIRED"])
    put("GHz", 1.0, "GHz", lambda: counts["CPU_CYCLES"] / cpu_s / 1e9)
    return values, units


def events_of(tables):
    return sorted({n for t in tables for e in (t.values() if isinstance(t, dict) else
                                               [m[1] for m in t])
                   for n in re.findall(r"\b[A-Z][A-Z0-9_]+\b", e)} | {"CPU_CYCLES", "INST_RETIRED"})


def vector(model, table, counts, slots, midr=None, note="", flat=None, cpu_s=1.0, extra=None):
    """the events flat reads and counts has not come from extra, else METRIC_COUNTS"""
    if flat is not None:
        counts = {n: counts[n] if n in counts else (extra or METRIC_COUNTS)[n]
                  for n in events_of([table, flat])}
    v = {"model": model, "note": note, "counts": counts,
         "expected": {n: {"value": evaluate(x, counts, slots, midr)} for n, x in table.items()}}
    if flat is not None:
        v["metrics"], v["units"] = flat_metrics(flat, counts, slots, midr, cpu_s)
        v["cpu_s"] = cpu_s
    if midr is not None:
        v["cpu_part"] = midr >> 4 & 0xfff
        v["cpu_revision"] = (midr >> 20 & 0xf) * 16 + (midr & 0xf)
    if slots is not None:
        v["slots"] = slots
    return v


# Counts of the events the flat metrics read beside the trees' (a second of a busy core)
METRIC_COUNTS = {
    "INST_RETIRED": 1700000000.0, "INST_SPEC": 2120000000.0, "BR_RETIRED": 310000000.0,
    "BR_MIS_PRED_RETIRED": 4200000.0, "BR_IMMED_RETIRED": 240000000.0,
    "BR_RETURN_RETIRED": 18000000.0, "BR_IND_RETIRED": 41000000.0,
    "BR_IMMED_SPEC": 250000000.0, "BR_RETURN_SPEC": 19000000.0, "BR_INDIRECT_SPEC": 23000000.0,
    "PC_WRITE_SPEC": 290000000.0, "CRYPTO_SPEC": 1200000.0, "DP_SPEC": 980000000.0,
    "ASE_SPEC": 61000000.0, "VFP_SPEC": 33000000.0, "LD_SPEC": 520000000.0,
    "ST_SPEC": 260000000.0, "ISB_SPEC": 11000.0, "DSB_SPEC": 320000.0, "DMB_SPEC": 870000.0,
    "DTLB_WALK": 230000.0, "ITLB_WALK": 44000.0, "L1D_TLB": 790000000.0,
    "L1I_TLB": 480000000.0, "L1D_TLB_REFILL": 3600000.0, "L1I_TLB_REFILL": 910000.0,
    "L2D_TLB": 4600000.0, "L2D_TLB_REFILL": 290000.0, "L1D_CACHE": 810000000.0,
    "L1D_CACHE_REFILL": 22000000.0, "L1I_CACHE": 530000000.0, "L1I_CACHE_REFILL": 6400000.0,
    "L2D_CACHE": 67000000.0, "L2D_CACHE_REFILL": 9300000.0, "L3D_CACHE": 9800000.0,
    "L3D_CACHE_REFILL": 2700000.0, "LL_CACHE_RD": 8800000.0, "LL_CACHE_MISS_RD": 2100000.0,
    "SVE_INST_SPEC": 14000000.0, "FP_HP_SPEC": 100000.0, "FP_SP_SPEC": 22000000.0,
    "FP_DP_SPEC": 11000000.0, "FP_SCALE_OPS_SPEC": 55000000.0, "FP_FIXED_OPS_SPEC": 66000000.0,
    "SVE_PRED_SPEC": 12000000.0, "SVE_PRED_EMPTY_SPEC": 310000.0,
    "SVE_PRED_FULL_SPEC": 9900000.0, "SVE_PRED_PARTIAL_SPEC": 1790000.0,
    "STALL_FRONTEND": 180000000.0, "STALL_BACKEND": 420000000.0,
}
# Every divisor of a flat metric 0 (and the CPU time): each such metric 0 (perf: NaN)
ZERO_DIVISORS = dict(METRIC_COUNTS, INST_RETIRED=0.0, INST_SPEC=0.0, BR_RETIRED=0.0,
                     L1D_TLB=0.0, L1I_TLB=0.0, L2D_TLB=0.0, L1D_CACHE=0.0, L1I_CACHE=0.0,
                     L2D_CACHE=0.0, L3D_CACHE=0.0, LL_CACHE_RD=0.0, SVE_PRED_SPEC=0.0)


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
N1C = {"CPU_CYCLES": 1000000000.0, "STALL_FRONTEND": 180000000.0, "STALL_BACKEND": 420000000.0,
       "INST_RETIRED": 1700000000.0}
ZD = "every flat metric's divisor 0, cpu_s 0: those metrics 0 (perf: NaN)"
files = {
    "neoverse-v1": [vector("neoverse-v1", V1, L1, 8, note="width 8", flat=N1_V1_METRICS),
                    vector("neoverse-v1", V1, L1B, 6, note="#slots 6 (--slots 6): only where perf writes #slots",
                           flat=N1_V1_METRICS, cpu_s=0.61),
                    vector("neoverse-v1", V1, ZERO_OPS, 8, note="OP_SPEC 0: Bad_Speculation and Retiring 0",
                           flat=N1_V1_METRICS),
                    vector("neoverse-v1", V1, L1, 8, note=ZD, flat=N1_V1_METRICS, cpu_s=0.0,
                           extra=ZERO_DIVISORS)],
    "neoverse-n2": [vector("neoverse-n2", N2, L1, 5, note="no MIDR (offline): counts as they are",
                           flat=N2_V2_METRICS),
                    vector("neoverse-n2", N2, L1B, 5, 0x410fd492, "N2 r0p2: one slot per cycle off STALL_SLOT(_FRONTEND)",
                           flat=N2_V2_METRICS, cpu_s=0.85),
                    vector("neoverse-n2", N2, L1B, 5, 0x410fd493, "N2 r0p3: no correction", flat=N2_V2_METRICS),
                    vector("neoverse-n2", N2, L1B, 5, 0x411fd490, "N2 r1p0: no correction", flat=N2_V2_METRICS),
                    vector("neoverse-n2", N2, L1B, 5, 0x410fd4f0, "V2's part with N2's file: no correction",
                           flat=N2_V2_METRICS),
                    vector("neoverse-n2", N2, ZERO_OPS, 5, note=ZD + "; OP_SPEC 0", flat=N2_V2_METRICS,
                           cpu_s=0.0, extra=ZERO_DIVISORS)],
    "neoverse-v2": [vector("neoverse-v2", N2, L1, 8, note="width 8", flat=N2_V2_METRICS, cpu_s=0.97),
                    vector("neoverse-v2", N2, L1B, 8, 0x410fd4f1, "V2 r0p1: no correction", flat=N2_V2_METRICS),
                    vector("neoverse-v2", N2, L1, 8, note=ZD, flat=N2_V2_METRICS, cpu_s=0.0,
                           extra=ZERO_DIVISORS)],
    "neoverse-n3": [vector("neoverse-n3", n3(5), dict(n3l1, **DEEP), 5, note="levels 1-4", flat=N3_METRICS),
                    vector("neoverse-n3", n3(5), dict(n3l1, **NO_BACKEND), 4, note="STALL_BACKEND 0: its children 0; #slots 4",
                           flat=N3_METRICS, cpu_s=0.5),
                    vector("neoverse-n3", n3(5), dict(n3l1, **DEEP), 5, note=ZD, flat=N3_METRICS,
                           cpu_s=0.0, extra=ZERO_DIVISORS)],
    "neoverse-v3": [vector("neoverse-v3", n3(10), dict(n3l1, **DEEP), 10, note="levels 1-4", flat=V3_METRICS,
                           cpu_s=0.73),
                    vector("neoverse-v3", n3(10), dict(n3l1, OP_RETIRED=0.0, OP_SPEC=0.0, **DEEP), 10, note="OP_SPEC 0: Bad_Speculation 0 despite its flush term",
                           flat=V3_METRICS),
                    vector("neoverse-v3", n3(10), dict(n3l1, **DEEP), 10, note=ZD, flat=V3_METRICS,
                           cpu_s=0.0, extra=ZERO_DIVISORS)],
    "neoverse-n1": [vector("neoverse-n1", N1, N1C, None, flat=N1_V1_METRICS),
                    vector("neoverse-n1", N1, dict(N1C, CPU_CYCLES=0.0, STALL_FRONTEND=5.0, STALL_BACKEND=0.0,
                                                   INST_RETIRED=0.0), None,
                           note="no cycles: 0 (perf: NaN)", flat=N1_V1_METRICS, cpu_s=0.25),
                    vector("neoverse-n1", N1, dict(N1C, INST_RETIRED=0.0), None, note=ZD,
                           flat=N1_V1_METRICS, cpu_s=0.0,
                           extra=ZERO_DIVISORS)],
}
if __name__ == "__main__":
    for name, vecs in files.items():
        with open("tests/vectors/%s.json" % name, "w") as f:
            json.dump(vecs, f, indent=1, sort_keys=True)
            f.write("\n")
