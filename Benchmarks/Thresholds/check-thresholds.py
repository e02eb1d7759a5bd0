#!/usr/bin/env python3
"""Checks a JMH export of the PortRunLoopGuards benchmarks against Benchmarks/Thresholds/guards.json.

Only counts are guarded (allocations, wake signals), never wall clock: on a shared 2-vCPU VM time
swings run to run, counts do not. Each guard normalises a raw per-sample metric by the sample's
`operations` custom metric, takes a nearest-rank percentile over the samples and compares it with
`max`; a guard with a `min` also requires the lowest sample, normalised the same way, to reach it. Exit status 0 when every guard holds, 1 otherwise (and when a guarded benchmark is missing).

Usage: check-thresholds.py GUARDS.json RESULTS.jmh.json
"""
import json
import math
import sys


def percentile(values, p):
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def main():
    guards_path, results_path = sys.argv[1], sys.argv[2]
    guards = json.load(open(guards_path))["guards"]
    results = {}
    for entry in json.load(open(results_path)):
        name = entry["benchmark"].split(".", 3)[3]
        metrics = {key: [v for row in m["rawData"] for v in row] for key, m in entry["secondaryMetrics"].items()}
        results[name] = metrics
    failures = 0
    passed = 0
    for guard in guards:
        name, metric = guard["benchmark"], guard["metric"]
        metrics = results.get(name)
        if metrics is None or metric not in metrics or "operations" not in metrics:
            print(f"FAIL {name}: no '{metric}' in the results (benchmark missing or renamed?)")
            failures += 1
            continue
        operations = metrics["operations"][0] or 1
        value = percentile(metrics[metric], guard.get("percentile", 50)) / operations * guard.get("scale", 1)
        ok = value <= guard["max"]
        bounds = f"max {guard['max']:g}"
        if "min" in guard:
            lowest = min(metrics[metric]) / operations * guard.get("scale", 1)
            ok = ok and lowest >= guard["min"]
            bounds = f"lowest sample {lowest:.6g}, min {guard['min']:g}; {bounds}"
        unit = guard.get("unit", f"{metric} per operation")
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {value:.6g} {unit} ({bounds}; {guard['why']})")
        if ok:
            passed += 1
        else:
            failures += 1
    print(f"{passed} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
