#!/usr/bin/env python3
"""Turns the Benchmarks package's JMH export into the Docs/Benchmarks.md table and SVG charts.

Usage:
  Scripts/plot-benchmarks.py --run unpinned=PATH.jmh.json [--run pinned=PATH.jmh.json]
                             [--machine FILE] [--svg-dir Docs] [--markdown OUT.md]

No third-party dependencies: the charts are SVG written by hand.

Every number is derived from the raw per-sample values of the export (rawData), never from the
scaled text output: wall clock per sample divided by the sample's `operations` custom metric gives
ns per message / per round trip; malloc, context-switch and wake-signal counts are normalised the
same way. Percentiles are nearest-rank over the samples.
"""
import argparse
import json
import math
import sys
from pathlib import Path

TIME_UNITS = {"ns": 1.0, "μs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}

# Peers in display order, floor first.
PEERS = [
    "RawEventfd",
    "RawLibEvent",
    "Dispatch.async",
    "NIO.execute",
    "RunLoop.perform",
    "Ours.perform",
    "Ours.MessagePort.send",
    # The same hand-offs reading the caller's ServiceContext per message (throughput only).
    "Ours.perform.contextCapture",
    "Ours.MessagePort.send.contextCapture",
]
# Peers whose wake signals the harness can count (the others report nothing, and package-benchmark
# fills an unreported custom metric with another benchmark's values in the export: ignore them).
COUNTS_WAKES = ("Raw", "Ours.", "RunLoop.perform", "Redirect.Ours.")

COLORS = {
    "RawEventfd": "#7f7f7f",
    "RawLibEvent": "#bcbcbc",
    "Dispatch.async": "#ff7f0e",
    "NIO.execute": "#2ca02c",
    "RunLoop.perform": "#9467bd",
    "Ours.perform": "#1f77b4",
    "Ours.MessagePort.send": "#17becf",
    "Ours.perform.contextCapture": "#aec7e8",
    "Ours.MessagePort.send.contextCapture": "#9edae5",
}


def percentile(values, p):
    """Nearest-rank percentile (p in 0...100)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


class Result:
    """One benchmark of one run, with its raw samples."""

    def __init__(self, entry):
        full = entry["benchmark"]  # package.benchmark.<Target>.<Name>
        parts = full.split(".", 3)
        self.target = parts[2]
        self.name = parts[3]
        self.scenario, _, self.peer = self.name.partition(".")
        self.metrics = {}
        for key, metric in entry.get("secondaryMetrics", {}).items():
            self.metrics[key] = (metric["scoreUnit"], [v for row in metric["rawData"] for v in row])
        primary = entry["primaryMetric"]
        self.metrics.setdefault("Throughput", (primary["scoreUnit"], [v for row in primary["rawData"] for v in row]))

    def raw(self, key):
        unit, values = self.metrics.get(key, (None, []))
        return values

    def wall_ns(self):
        unit, values = self.metrics.get("Time (wall clock)", ("ns", []))
        scale = TIME_UNITS.get(unit, 1.0)
        return [v * scale for v in values]

    def operations(self):
        ops = self.raw("operations")
        return ops[0] if ops else 1

    def per_op_ns(self, p):
        return percentile(self.wall_ns(), p) / self.operations()

    def ops_p50(self):
        """Operations per sample, p50: the server-shaped scenarios cap a sample's wall clock, so a
        capped sample handles fewer operations than the scenario asks for."""
        ops = self.raw("operations")
        return percentile(ops, 50) if ops else 1

    def capped_per_op_ns(self, p):
        return percentile(self.wall_ns(), p) / self.ops_p50()

    def capped_per_op(self, key, p=50):
        values = self.raw(key)
        return percentile(values, p) / self.ops_p50() if values else None

    def per_op(self, key, p=50):
        """A count metric per operation (p-th percentile over samples)."""
        values = self.raw(key)
        if not values:
            return None
        return percentile(values, p) / self.operations()

    def counts_wakes(self):
        return any(self.peer.startswith(prefix) for prefix in COUNTS_WAKES)

    def wakes_per_op(self, p=50):
        return self.per_op("wakeSignals", p) if self.counts_wakes() else None


def load(path):
    with open(path) as handle:
        return {r.name: r for r in (Result(e) for e in json.load(handle))}


def fmt(value, digits=1):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.{digits}f}"


def fmt_count(value):
    if value is None:
        return "–"
    if value == 0:
        return "0"
    if value < 0.01:
        return f"{value:.4f}"
    return f"{value:.2f}"


# ----------------------------------------------------------------------------- tables

def throughput_table(run, label):
    lines = [f"#### Throughput ({label}): 1M messages per sample (RunLoop.perform: 100k), p50 of the samples", "",
             "| peer | 1P ns/msg | 1P M msg/s | 2P ns/msg | 2P M msg/s | mallocs/msg | ctx switches /1M | wake signals /1M |",
             "|:--|--:|--:|--:|--:|--:|--:|--:|"]
    for peer in PEERS:
        one, two = run.get(f"Throughput1P.{peer}"), run.get(f"Throughput2P.{peer}")
        if not one:
            continue
        ns1 = one.per_op_ns(50)
        ns2 = two.per_op_ns(50) if two else None
        wakes = one.wakes_per_op()
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} |".format(
            peer, fmt(ns1), fmt(1e3 / ns1, 2), fmt(ns2), fmt(1e3 / ns2, 2) if ns2 else "–",
            fmt_count(one.per_op("Malloc (total)")), fmt(one.per_op("contextSwitches") * 1e6, 0),
            fmt(wakes * 1e6, 0) if wakes is not None else "n/a"))
    return lines


def latency_table(run, label):
    lines = [f"#### Latency ({label})", "",
             "| peer | round trip p50 µs | round trip p99 µs | mallocs/RT | ctx switches/RT | wake signals/RT | first send after idle p50 µs | p99 µs |",
             "|:--|--:|--:|--:|--:|--:|--:|--:|"]
    for peer in PEERS:
        rt, first = run.get(f"RoundTrip.{peer}"), run.get(f"FirstSendAfterIdle.{peer}")
        if not rt:
            continue
        lat = first.raw("latencyNs") if first else []
        wakes = rt.wakes_per_op()
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} |".format(
            peer, fmt(rt.per_op_ns(50) / 1e3, 2), fmt(rt.per_op_ns(99) / 1e3, 2),
            fmt_count(rt.per_op("Malloc (total)")), fmt(rt.per_op("contextSwitches"), 2),
            fmt(wakes, 2) if wakes is not None else "n/a",
            fmt(percentile(lat, 50) / 1e3, 1) if lat else "–", fmt(percentile(lat, 99) / 1e3, 1) if lat else "–"))
    return lines


def other_table(run, label):
    rows = [
        ("Redirected notification, 1M burst (ns/msg)", "Throughput1P.Redirect.Ours.ThreadNotificationCenter.post", "Throughput1P.Redirect.NIO.execute", "throughput"),
        ("Redirected notification, round trip (µs)", "RoundTrip.Redirect.Ours.ThreadNotificationCenter.post", "RoundTrip.Redirect.NIO.execute", "rt"),
        ("Same-thread post (ns/post)", "SameThreadPost.Ours.ThreadNotificationCenter.post", "SameThreadPost.Foundation.NotificationCenter.post", "inline"),
        ("Blocking call from a plain thread (µs)", "SyncRoundTrip.Ours.performAndWait", "SyncRoundTrip.NIO.submit.wait", "rt"),
        ("Blocking call, Dispatch.sync (µs)", "SyncRoundTrip.Ours.performAndWait", "SyncRoundTrip.Dispatch.sync", "rt"),
        ("Actor hop, NIO's executor (µs per await)", "ActorHop.Ours.PortRunLoop", "ActorHop.NIO.EventLoop", "rt"),
        ("Actor hop, default executor (µs per await)", "ActorHop.Ours.PortRunLoop", "ActorHop.Default", "rt"),
    ]
    lines = [f"#### Ours against a peer ({label}), p50 (p99)", "",
             "| scenario | ours | peer | peer / ours | ours mallocs/op | peer mallocs/op |",
             "|:--|--:|--:|--:|--:|--:|"]
    for title, ours_name, peer_name, kind in rows:
        ours, peer = run.get(ours_name), run.get(peer_name)
        if not ours or not peer:
            continue
        scale = 1e3 if kind == "rt" else 1.0

        def cell(result):
            return f"{fmt(result.per_op_ns(50) / scale, 2)} ({fmt(result.per_op_ns(99) / scale, 2)})"

        ratio = peer.per_op_ns(50) / ours.per_op_ns(50)
        lines.append(f"| {title}: {ours_name.split('.', 1)[1]} vs {peer_name.split('.', 1)[1]} | {cell(ours)} | {cell(peer)} | "
                     f"{ratio:.2f}× | {fmt_count(ours.per_op('Malloc (total)'))} | {fmt_count(peer.per_op('Malloc (total)'))} |")
    return lines


def targets(runs):
    """The targets, as ratios within one run. Returns markdown lines."""
    lines = ["| target | run | measured | met |", "|:--|:--|--:|:--:|"]

    def row(text, label, value, ok):
        lines.append(f"| {text} | {label} | {value} | {'—' if ok is None else 'yes' if ok else '**no**'} |")

    for label, run in runs:
        send, floor = run.get("Throughput1P.Ours.MessagePort.send"), run.get("Throughput1P.RawLibEvent")
        nio, perform = run.get("Throughput1P.NIO.execute"), run.get("Throughput1P.Ours.perform")
        if send and floor:
            r = send.per_op_ns(50) / floor.per_op_ns(50)
            row("MessagePort.send throughput ≤ 1.0× raw libevent floor (time per message)", label, f"{r:.2f}×", r <= 1.0)
        if send and nio:
            r = nio.per_op_ns(50) / send.per_op_ns(50)
            row("MessagePort.send ≥ 2.5× faster than NIO execute", label, f"{r:.2f}×", r >= 2.5)
        if send:
            m = send.per_op("Malloc (total)")
            row("0 mallocs per send (no components)", label, fmt_count(m), m is not None and m < 0.001)
        if perform:
            m = perform.per_op("Malloc (total)")
            row("≤ 1 malloc per perform", label, fmt_count(m), m is not None and m <= 1.0)
        for name in ("Throughput1P.Ours.MessagePort.send", "Throughput1P.Ours.perform",
                     "Throughput2P.Ours.MessagePort.send", "Throughput2P.Ours.perform"):
            result = run.get(name)
            if result and result.wakes_per_op() is not None:
                w = result.wakes_per_op() * 100
                row(f"≤ 1 wake signal per 100 messages ({name.split('.', 1)[1]}, {name[10:12]})", label, f"{w:.4f}", w <= 1.0)
        for hop in ("Ours.MessagePort.send", "Ours.perform"):
            for producers in ("1P", "2P"):
                plain, capturing = run.get(f"Throughput{producers}.{hop}"), run.get(f"Throughput{producers}.{hop}.contextCapture")
                if plain and capturing:
                    r = capturing.per_op_ns(50) / plain.per_op_ns(50)
                    lines.append(f"| (information) time per {hop.split('.', 1)[1]} reading the caller's ServiceContext "
                                 f"(capture on, none set) vs the default ({producers}) | {label} | {r:.2f}× | — |")
        ours_n, nio_n = run.get("Throughput1P.Redirect.Ours.ThreadNotificationCenter.post"), run.get("Throughput1P.Redirect.NIO.execute")
        if ours_n and nio_n:
            r = nio_n.per_op_ns(50) / ours_n.per_op_ns(50)
            row("redirected notification ≥ 2× faster than NIO execute carrying it (1M burst)", label, f"{r:.2f}×", r >= 2.0)
        perform_rt, source_rt = run.get("RoundTrip.Ours.perform"), run.get("RoundTrip.Ours.RunLoopSource.signal")
        if perform_rt and source_rt:
            r = source_rt.per_op_ns(50) / perform_rt.per_op_ns(50)
            row("signalled custom source round trip p50 ≤ 1.1× perform's", label, f"{r:.2f}×", r <= 1.1)
        observed_rt = run.get("RoundTrip.Ours.perform.10observers")
        if perform_rt and observed_rt:
            r = observed_rt.per_op_ns(50) / perform_rt.per_op_ns(50)
            lines.append(f"| (information) perform round trip p50 with 10 observers vs none | {label} | {r:.2f}× | — |")
        if label == "pinned":
            raw = run.get("RoundTrip.RawEventfd")
            for name in ("RoundTrip.Ours.MessagePort.send", "RoundTrip.Ours.perform"):
                ours_rt = run.get(name)
                if raw and ours_rt:
                    r = ours_rt.per_op_ns(50) / raw.per_op_ns(50)
                    row(f"round-trip p50 pinned ≤ 1.15× raw eventfd ({name.split('.', 1)[1]})", label, f"{r:.2f}×", r <= 1.15)
        server_targets(run, label, row)
    return lines


def server_targets(run, label, row):
    """The server-loop targets: ratios within one run."""
    floor = run.get("FdPingPong.LibEvent")
    for peer in ("Ours.run", "Ours.runModeBefore"):
        r = run.get(f"FdPingPong.{peer}")
        if r and floor:
            x = r.capped_per_op_ns(50) / floor.capped_per_op_ns(50)
            row(f"fd ping-pong ≤ 1.2× a bare libevent base ({peer})", label, f"{x:.2f}×", x <= 1.2)
    for scenario, kind in (("FdPingPong", "fd sources"), ("Timers", "timers")):
        for peer in ("Ours.run", "Ours.runModeBefore"):
            none, many = run.get(f"{scenario}.Idle0.{peer}"), run.get(f"{scenario}.Idle100k.{peer}")
            if none and many:
                x = many.capped_per_op_ns(50) / none.capped_per_op_ns(50)
                row(f"100k idle {kind} ≤ 1.2× none ({peer})", label, f"{x:.2f}×", x <= 1.2)
    # Sparse traffic and a first send after idle are judged on the interleaved scenarios (every
    # peer in turn within each sample, so all meet the same host; Docs/Benchmarks.md, "Interleaved
    # scenarios"); the ratio of the separate benchmarks is shown beside it for reference.
    for gap in SPARSE_GAPS:
        ours = run.get(f"SparseCPU.Ours.{gap}")
        interleaved = run.get(f"SparseCPU.Interleaved.{gap}")
        for peer in ("Dispatch", "NIO"):
            other = run.get(f"SparseCPU.{peer}.{gap}")
            separate = None
            if ours and other and ours.raw("cpuNsPerMessage") and other.raw("cpuNsPerMessage"):
                separate = percentile(ours.raw("cpuNsPerMessage"), 50) / percentile(other.raw("cpuNsPerMessage"), 50)
            if interleaved and interleaved.raw("cpuNsPerMessage.Ours") and interleaved.raw(f"cpuNsPerMessage.{peer}"):
                x = (percentile(interleaved.raw("cpuNsPerMessage.Ours"), 50)
                     / percentile(interleaved.raw(f"cpuNsPerMessage.{peer}"), 50))
                # Where each consumer slept decides much of the row unpinned (see "Sparse traffic"
                # in Docs/Benchmarks.md): shown beside the ratio.
                placed = ""
                if interleaved.raw("sameCPUPercent.Ours") and interleaved.raw(f"sameCPUPercent.{peer}"):
                    placed = (f"on the producer's CPU: {percentile(interleaved.raw('sameCPUPercent.Ours'), 50):.0f}%"
                              f" vs {percentile(interleaved.raw(f'sameCPUPercent.{peer}'), 50):.0f}%; ")
                reference = f"separate benchmarks: {separate:.2f}×" if separate is not None else "no separate benchmarks"
                row(f"sparse CPU per message ≤ 1.0× {peer} ({gap} gaps, interleaved)", label,
                    f"{x:.2f}× ({placed}{reference})", x <= 1.0)
            elif separate is not None:
                placed = ""
                if ours.raw("sameCPUPercent") and other.raw("sameCPUPercent"):
                    placed = (f" (on the producer's CPU: {percentile(ours.raw('sameCPUPercent'), 50):.0f}%"
                              f" vs {percentile(other.raw('sameCPUPercent'), 50):.0f}%)")
                row(f"sparse CPU per message ≤ 1.0× {peer} ({gap} gaps)", label, f"{separate:.2f}×{placed}", separate <= 1.0)
    raw = run.get("FirstSendAfterIdle.RawEventfd")
    interleaved = run.get("FirstSendAfterIdle.Interleaved")
    for peer in ("Ours.perform", "Ours.MessagePort.send"):
        ours = run.get(f"FirstSendAfterIdle.{peer}")
        separate = None
        if raw and ours and raw.raw("latencyNs") and ours.raw("latencyNs"):
            separate = percentile(ours.raw("latencyNs"), 50) / percentile(raw.raw("latencyNs"), 50)
        if interleaved and interleaved.raw(f"latencyNs.{peer}") and interleaved.raw("latencyNs.RawEventfd"):
            x = percentile(interleaved.raw(f"latencyNs.{peer}"), 50) / percentile(interleaved.raw("latencyNs.RawEventfd"), 50)
            reference = f" (separate benchmarks: {separate:.2f}×)" if separate is not None else ""
            row(f"first send after idle p50 ≤ 1.3× raw eventfd ({peer}, interleaved)", label, f"{x:.2f}×{reference}", x <= 1.3)
        elif separate is not None:
            row(f"first send after idle p50 ≤ 1.3× raw eventfd ({peer})", label, f"{separate:.2f}×", separate <= 1.3)
    ours, nio = run.get("SyncRoundTrip.Ours.performAndWait"), run.get("SyncRoundTrip.NIO.submit.wait")
    if ours and nio:
        x = nio.per_op_ns(50) / ours.per_op_ns(50)
        row("performAndWait ≥ 1.2× NIO submit{}.wait() (from a plain thread)", label, f"{x:.2f}×", x >= 1.2)
    if ours:
        m = ours.per_op("Malloc (total)")
        row("≤ 2 mallocs per performAndWait", label, fmt_count(m), m is not None and m <= 2.0)
    ours, nio = run.get("ActorHop.Ours.PortRunLoop"), run.get("ActorHop.NIO.EventLoop")
    if ours and nio:
        x = nio.per_op_ns(50) / ours.per_op_ns(50)
        row("actor hop ≥ 1.2× NIO's executor", label, f"{x:.2f}×", x >= 1.2)
    ours, nio = run.get("EchoServer.Ours"), run.get("EchoServer.NIO")
    if ours and nio and ours.raw("requestsPerSecond") and nio.raw("requestsPerSecond"):
        x = percentile(ours.raw("requestsPerSecond"), 50) / percentile(nio.raw("requestsPerSecond"), 50)
        row("echo server ≥ 1.0× NIO's requests/s", label, f"{x:.2f}×", x >= 1.0)
        p_ours, p_nio = percentile(ours.raw("p99Ns"), 50), percentile(nio.raw("p99Ns"), 50)
        row("echo server p99 ≤ NIO's", label, f"{p_ours / 1e3:,.0f} vs {p_nio / 1e3:,.0f} µs", p_ours <= p_nio)
    stream_echo_targets(run, label, row)
    entry = run.get("RunEntry.Ours.Idle10k")
    if entry and entry.raw("eventRegistrations"):
        x = max(entry.raw("eventRegistrations")) / max(1, entry.ops_p50())
        row("event_add + event_del per run entry of an unchanged mode = 0 (10k fd sources, 1k timers)", label, f"{x:g}", x == 0)
    bare, observed = run.get("ObserverRounds.Ours.perform"), run.get("ObserverRounds.Ours.perform.10observers")
    if bare and observed and bare.raw("observerRounds") and observed.raw("observerRounds"):
        none = [v / max(1, bare.ops_p50()) for v in bare.raw("observerRounds")]
        ten = [v / max(1, observed.ops_p50()) for v in observed.raw("observerRounds")]
        row("observer rounds per turn: 0 without observers, exactly 4 with 10", label,
            f"{max(none):g} / {min(ten):g}–{max(ten):g}", max(none) == 0 and min(ten) == 4 and max(ten) == 4)
    cross_process_targets(run, label, row)
    bus_notification_targets(run, label, row)
    tls_targets(run, label, row)


# ----------------------------------------------------------------------------- server-shaped scenarios

FD_PEERS = ["Epoll", "LibEvent", "NIO", "Ours.run", "Ours.runModeBefore"]
IDLE_PEERS = ["LibEvent", "Ours.run", "Ours.runModeBefore"]
IDLE_COUNTS = ["0", "1k", "10k", "100k"]
SPARSE_PEERS = ["Inline", "Dispatch", "NIO", "Ours"]
SPARSE_GAPS = ["50us", "200us", "1ms"]


def fd_ping_pong_table(run, label):
    lines = [f"#### Fd ping-pong ({label}): one thread, a socketpair, 100k events per sample", "",
             "| peer | ns/event p50 | p99 | × LibEvent | mallocs/event | ctx switches /1k events |",
             "|:--|--:|--:|--:|--:|--:|"]
    floor = run.get("FdPingPong.LibEvent")
    for peer in FD_PEERS:
        r = run.get(f"FdPingPong.{peer}")
        if not r:
            continue
        ratio = f"{r.capped_per_op_ns(50) / floor.capped_per_op_ns(50):.2f}×" if floor else "–"
        switches = r.capped_per_op("contextSwitches")
        lines.append(f"| {peer} | {fmt(r.capped_per_op_ns(50))} | {fmt(r.capped_per_op_ns(99))} | {ratio} | "
                     f"{fmt_count(r.capped_per_op('Malloc (total)'))} | {fmt(switches * 1e3, 2) if switches is not None else '–'} |")
    return lines if len(lines) > 4 else []


def idle_table(run, label):
    lines = [f"#### Idle sources ({label}): the fd ping-pong beside N idle fd sources or N timers an hour away, ns/event p50", "",
             "| peer | idle load | " + " | ".join(f"N = {n}" for n in IDLE_COUNTS) + " | registered at 100k |",
             "|:--|:--|" + "--:|" * (len(IDLE_COUNTS) + 1)]
    for scenario, kind in (("FdPingPong", "fd sources"), ("Timers", "timers")):
        for peer in IDLE_PEERS:
            cells, registered = [], "–"
            for n in IDLE_COUNTS:
                r = run.get(f"{scenario}.Idle{n}.{peer}")
                cells.append(fmt(r.capped_per_op_ns(50)) if r else "–")
                if r and n == IDLE_COUNTS[-1] and r.raw("idleSources"):
                    registered = f"{percentile(r.raw('idleSources'), 50):,.0f}"
            if any(c != "–" for c in cells):
                lines.append(f"| {peer} | {kind} | " + " | ".join(cells) + f" | {registered} |")
    return lines if len(lines) > 4 else []


def timer_churn_table(run, label):
    lines = [f"#### Timer churn ({label}): 100k timers per sample (9 of 10 cancelled 30 s timeouts, 1 of 10 fires)", "",
             "| peer | ns/timer p50 | p99 | × LibEvent | mallocs/timer |", "|:--|--:|--:|--:|--:|"]
    floor = run.get("TimerChurn.LibEvent")
    for peer in ("LibEvent", "NIO", "Ours"):
        r = run.get(f"TimerChurn.{peer}")
        if not r:
            continue
        ratio = f"{r.capped_per_op_ns(50) / floor.capped_per_op_ns(50):.2f}×" if floor else "–"
        lines.append(f"| {peer} | {fmt(r.capped_per_op_ns(50))} | {fmt(r.capped_per_op_ns(99))} | {ratio} | "
                     f"{fmt_count(r.capped_per_op('Malloc (total)'))} |")
    return lines if len(lines) > 4 else []


def timer_lateness_table(run, label):
    lines = [f"#### Timer lateness ({label}): how late a one-shot timer 300 µs ahead runs on an idle loop, µs", "",
             "| peer | p50 | p99 | × NIO |", "|:--|--:|--:|--:|"]
    nio = run.get("TimerLateness.NIO")
    for peer in ("LibEvent", "NIO", "Ours"):
        r = run.get(f"TimerLateness.{peer}")
        late = r.raw("latencyNs") if r else []
        if not late:
            continue
        ratio = f"{percentile(late, 50) / percentile(nio.raw('latencyNs'), 50):.2f}×" if nio and nio.raw("latencyNs") else "–"
        lines.append(f"| {peer} | {fmt(percentile(late, 50) / 1e3, 1)} | {fmt(percentile(late, 99) / 1e3, 1)} | {ratio} |")
    return lines if len(lines) > 4 else []


def sparse_rows(cell):
    """The rows of a sparse-traffic table: one per peer with any measurement, `cell(peer, gap)` each
    (or "–")."""
    rows = []
    for peer in SPARSE_PEERS:
        cells = [cell(peer, gap) for gap in SPARSE_GAPS]
        if any(c != "–" for c in cells):
            rows.append(f"| {peer} | " + " | ".join(cells) + " |")
    return rows


def sparse_header(title):
    return [title, "", "| peer | " + " | ".join(SPARSE_GAPS) + " |", "|:--|" + "--:|" * len(SPARSE_GAPS)]


def sparse_table(run, label):
    def cell(peer, gap):
        r = run.get(f"SparseCPU.{peer}.{gap}")
        cpu = r.raw("cpuNsPerMessage") if r else []
        if not cpu:
            return "–"
        switches = r.capped_per_op("contextSwitches")
        same = r.raw("sameCPUPercent")
        placed = f"; {percentile(same, 50):.0f}%" if same else ""
        return f"{fmt(percentile(cpu, 50))} ({fmt(switches, 2) if switches is not None else '–'}{placed})"

    rows = sparse_rows(cell)
    return sparse_header(f"#### Sparse traffic ({label}): process CPU per message when one message comes every gap, ns, p50 "
                         "(ctx switches/msg; % of messages handled on the CPU they were sent from); `Inline` is the producer's "
                         "own share (pacing, no hand-off)") + rows if rows else []


def sparse_interleaved_table(run, label):
    def cell(peer, gap):
        r = run.get(f"SparseCPU.Interleaved.{gap}")
        cpu = r.raw(f"cpuNsPerMessage.{peer}") if r else []
        if not cpu:
            return "–"
        same = r.raw(f"sameCPUPercent.{peer}")
        return f"{fmt(percentile(cpu, 50))}" + (f" ({percentile(same, 50):.0f}%)" if same else "")

    rows = sparse_rows(cell)
    return sparse_header(f"#### Sparse traffic, interleaved ({label}): the same, every peer in turn within each sample, ns, p50 "
                         "(% of messages handled on the CPU they were sent from)") + rows if rows else []


def first_send_interleaved_table(run, label):
    r = run.get("FirstSendAfterIdle.Interleaved")
    if not r:
        return []
    raw = r.raw("latencyNs.RawEventfd")
    lines = [f"#### First send after idle, interleaved ({label}): every peer in turn within each sample, one message after "
             "10 ms idle, µs", "", "| peer | p50 | p99 | × RawEventfd (p50) |", "|:--|--:|--:|--:|"]
    for peer in PEERS:
        lat = r.raw(f"latencyNs.{peer}")
        if not lat:
            continue
        ratio = f"{percentile(lat, 50) / percentile(raw, 50):.2f}×" if raw else "–"
        lines.append(f"| {peer} | {fmt(percentile(lat, 50) / 1e3, 1)} | {fmt(percentile(lat, 99) / 1e3, 1)} | {ratio} |")
    return lines


# The echo server's rows: (configuration, benchmark name suffixes in display order).
ECHO_ROWS = [
    ("1 loop, 1000 connections", ["NIO", "Ours", "Streams", "Bufferevent"]),
    ("1 loop, 100 connections", ["Conn100.NIO", "Conn100.Ours", "Conn100.Streams", "Conn100.Bufferevent"]),
    ("1 loop, 100 connections, 60,000 requests/s offered",
     ["Conn100.At60k.NIO", "Conn100.At60k.Ours", "Conn100.At60k.Streams", "Conn100.At60k.Bufferevent"]),
    ("1 loop, 100 connections + 10k idle", ["Idle10k.Streams"]),
    ("2 loops, 1000 connections", ["TwoLoops.NIO", "TwoLoops.Streams"]),
]


def echo_rps(r):
    return percentile(r.raw("requestsPerSecond"), 50) if r and r.raw("requestsPerSecond") else None


def echo_p99(r):
    return percentile(r.raw("p99Ns"), 50) if r and r.raw("p99Ns") else None


def echo_cpu(r):
    """The server threads' CPU time per request, ns (p50 over samples / p50 requests per sample)."""
    return r.capped_per_op("serverCPUNs") if r else None


def echo_table(run, label):
    lines = [f"#### Echo server ({label}): 64-byte requests from 2 C client threads; `Ours` on fd sources, "
             "`Streams` on StreamListener/StreamConnection, `Bufferevent` on libevent's evconnlistener and bufferevents (C)", "",
             "| configuration | peer | requests/s p50 | p99 latency µs (p50 of samples) | server CPU µs/request | "
             "mallocs/request | ctx switches/request |",
             "|:--|:--|--:|--:|--:|--:|--:|"]
    for configuration, names in ECHO_ROWS:
        for name in names:
            r = run.get(f"EchoServer.{name}")
            if not r:
                continue
            rps, p99, cpu = echo_rps(r), echo_p99(r), echo_cpu(r)
            lines.append(f"| {configuration} | {name.rsplit('.', 1)[-1]} | {fmt(rps) if rps else '–'} | "
                         f"{fmt(p99 / 1e3) if p99 else '–'} | {fmt(cpu / 1e3, 2) if cpu else '–'} | "
                         f"{fmt_count(r.capped_per_op('Malloc (total)'))} | {fmt(r.capped_per_op('contextSwitches'), 2)} |")
    for shape in ("Direct", "Queued"):
        r = run.get(f"StreamEcho.Ours.{shape}")
        if r:
            lines.append(f"| one connection, blocking client ({shape.lower()} echo) | StreamEcho.Ours | – | – | – | "
                         f"{fmt_count(r.per_op('Malloc (total)'))} | {fmt(r.per_op('contextSwitches'), 2)} |")
    return lines if len(lines) > 4 else []


def stream_echo_targets(run, label, row):
    """The stream-socket echo targets: StreamListener/StreamConnection against NIO and against the
    same server on hand-written fd sources, one run."""
    get = lambda name: run.get(f"EchoServer.{name}")
    for prefix, what in (("", "1000 connections"), ("Conn100.", "100 connections")):
        streams, nio, raw = get(f"{prefix}Streams"), get(f"{prefix}NIO"), get(f"{prefix}Ours")
        if streams and nio and echo_rps(streams) and echo_rps(nio):
            x = echo_rps(streams) / echo_rps(nio)
            row(f"stream echo server ≥ 1.0× NIO's requests/s ({what})", label, f"{x:.2f}×", x >= 1.0)
        if streams and nio and echo_p99(streams) and echo_p99(nio):
            p_s, p_n = echo_p99(streams), echo_p99(nio)
            row(f"stream echo server p99 ≤ NIO's ({what})", label, f"{p_s / 1e3:,.0f} vs {p_n / 1e3:,.0f} µs", p_s <= p_n)
        if streams and raw and echo_cpu(streams) and echo_cpu(raw):
            x = echo_cpu(streams) / echo_cpu(raw)
            row(f"stream echo server CPU per request ≤ 1.1× the raw fd-source server ({what})", label, f"{x:.2f}×", x <= 1.1)
        buffered = get(f"{prefix}Bufferevent")
        if streams and buffered and echo_cpu(streams) and echo_cpu(buffered):
            # Why the connections are hand-written rather than libevent's bufferevents (StreamSockets).
            x = echo_cpu(streams) / echo_cpu(buffered)
            row(f"stream echo server CPU per request ≤ 1.0× libevent's bufferevent server ({what})", label, f"{x:.2f}×", x <= 1.0)
    # Latency at the same offered load, below every peer's saturation: at saturation a faster
    # server leaves the closed-loop clients always busy, and their p99 is their own time-sharing.
    streams, nio = get("Conn100.At60k.Streams"), get("Conn100.At60k.NIO")
    if streams and nio and echo_p99(streams) and echo_p99(nio):
        p_s, p_n = echo_p99(streams), echo_p99(nio)
        row("stream echo server p99 ≤ NIO's at the same offered load (100 connections, 60,000 requests/s)", label,
            f"{p_s / 1e3:,.0f} vs {p_n / 1e3:,.0f} µs", p_s <= p_n)
    streams, nio = get("TwoLoops.Streams"), get("TwoLoops.NIO")
    if streams and nio and echo_rps(streams) and echo_rps(nio):
        x = echo_rps(streams) / echo_rps(nio)
        row("stream echo server on 2 loops ≥ 1.0× NIO's 2-thread group, requests/s", label, f"{x:.2f}×", x >= 1.0)
    idle, none = get("Idle10k.Streams"), get("Conn100.Streams")
    if idle and none and echo_cpu(idle) and echo_cpu(none):
        x = echo_cpu(idle) / echo_cpu(none)
        row("stream echo server CPU per request with 10k idle connections ≤ 1.2× none (100 active)", label, f"{x:.2f}×", x <= 1.2)
    for shape in ("Direct", "Queued"):
        r = run.get(f"StreamEcho.Ours.{shape}")
        if r:
            m = r.per_op("Malloc (total)")
            row(f"0 mallocs per steady-state stream read + write ({shape.lower()} echo)", label, fmt_count(m),
                m is not None and m < 0.001)


# The TLS echo rows: (scenario, what one operation is).
TLS_SCENARIOS = [("Handshakes", "handshake"), ("Bulk", "MiB")]


def tls_table(run, label):
    lines = [f"#### TLS echo ({label}): one server thread, the same C client; `Ours` is StreamListener(tlsOn:), "
             "`COpenSSL` a C server on OpenSSL (epoll)", "",
             "| scenario | server | per second | server CPU µs per op | wall µs per op | mallocs/op (process) | "
             "ctx switches/op | × COpenSSL (server CPU) |",
             "|:--|:--|--:|--:|--:|--:|--:|--:|"]
    for scenario, unit in TLS_SCENARIOS:
        floor = run.get(f"TLSEcho.{scenario}.COpenSSL")
        for server in ("COpenSSL", "Ours"):
            r = run.get(f"TLSEcho.{scenario}.{server}")
            if not r:
                continue
            cpu, wall = echo_cpu(r), r.capped_per_op_ns(50)
            ratio = f"{cpu / echo_cpu(floor):.2f}×" if cpu and floor and echo_cpu(floor) else "–"
            lines.append(f"| {scenario} (per {unit}) | {server} | {fmt(1e9 / wall)} | {fmt(cpu / 1e3, 1) if cpu else '–'} | "
                         f"{fmt(wall / 1e3, 1)} | {fmt_count(r.capped_per_op('Malloc (total)'))} | "
                         f"{fmt(r.capped_per_op('contextSwitches'), 2)} | {ratio} |")
    return lines if len(lines) > 4 else []


def tls_targets(run, label, row):
    """The TLS targets: our TLS server (StreamListener(tlsOn:)) against a C server written directly on
    OpenSSL, the same client, one run. The target reads the server thread's CPU time per handshake
    and per MiB (the clients share the 2 vCPUs and bound the wall clock); the wall-clock ratio is
    shown beside it for information."""
    for scenario, unit in TLS_SCENARIOS:
        ours, floor = run.get(f"TLSEcho.{scenario}.Ours"), run.get(f"TLSEcho.{scenario}.COpenSSL")
        if not (ours and floor):
            continue
        if echo_cpu(ours) and echo_cpu(floor):
            x = echo_cpu(ours) / echo_cpu(floor)
            row(f"TLS server CPU per {unit} ≤ 1.3× a C server on OpenSSL ({scenario.lower()})", label, f"{x:.2f}×", x <= 1.3)
        x = ours.capped_per_op_ns(50) / floor.capped_per_op_ns(50)
        row(f"(information) TLS wall time per {unit} against the C server ({scenario.lower()})", label, f"{x:.2f}×", None)


CROSS_PROCESS_PEERS = ["Raw", "NIO", "DBus", "Ours", "OursAsync"]


def cross_process_table(run, label):
    lines = [f"#### Cross-process ({label}): a server in a second process, 16-byte messages", "",
             "| transport | round trip µs (p50 of samples) | round-trip p99 µs | 1 sender ns/msg | 4 sender processes ns/msg | "
             "mallocs/msg (1 sender, sending side) | × Raw (round trip) | × Raw (1 sender) |",
             "|:--|--:|--:|--:|--:|--:|--:|--:|"]
    raw_rt, raw_1p = run.get("CrossProcess.RoundTrip.Raw"), run.get("CrossProcess.Throughput1P.Raw")
    for peer in CROSS_PROCESS_PEERS:
        rt, one, four = (run.get(f"CrossProcess.{s}.{peer}") for s in ("RoundTrip", "Throughput1P", "Throughput4P"))
        if not (rt or one or four):
            continue
        p99 = rt.raw("p99Ns") if rt else None
        x_rt = f"{rt.per_op_ns(50) / raw_rt.per_op_ns(50):.2f}×" if rt and raw_rt else "–"
        x_1p = f"{one.per_op_ns(50) / raw_1p.per_op_ns(50):.2f}×" if one and raw_1p else "–"
        lines.append(f"| {peer} | {fmt(rt.per_op_ns(50) / 1e3, 2) if rt else '–'} | {fmt(percentile(p99, 50) / 1e3, 2) if p99 else '–'} | "
                     f"{fmt(one.per_op_ns(50)) if one else '–'} | {fmt(four.per_op_ns(50)) if four else '–'} | "
                     f"{fmt_count(one.per_op('Malloc (total)')) if one else '–'} | {x_rt} | {x_1p} |")
    return lines if len(lines) > 4 else []


def cross_process_targets(run, label, row):
    """The cross-process targets: ours against the raw SOCK_SEQPACKET floor and D-Bus, one run."""
    get = lambda scenario, peer: run.get(f"CrossProcess.{scenario}.{peer}")
    for scenario, what in (("Throughput1P", "1 sender"), ("Throughput4P", "4 sender processes")):
        ours, raw = get(scenario, "Ours"), get(scenario, "Raw")
        if ours and raw:
            x = ours.per_op_ns(50) / raw.per_op_ns(50)
            row(f"cross-process throughput ≥ 1/1.3 of the raw socket floor ({what}; time per message)", label, f"{x:.2f}×", x <= 1.3)
    ours, raw, dbus = get("RoundTrip", "Ours"), get("RoundTrip", "Raw"), get("RoundTrip", "DBus")
    if ours and raw:
        x = ours.per_op_ns(50) / raw.per_op_ns(50)
        row("cross-process round trip ≤ 1.3× the raw socket floor", label, f"{x:.2f}×", x <= 1.3)
    if ours and dbus:
        x = dbus.per_op_ns(50) / ours.per_op_ns(50)
        row("cross-process round trip ≥ 2× faster than a D-Bus method call", label, f"{x:.2f}×", x >= 2)
    one = get("Throughput1P", "Ours")
    if one:
        m = one.per_op("Malloc (total)")
        row("0 mallocs per cross-process message on the sending side (no components)", label, fmt_count(m), m is not None and m < 0.01)


BUS_TRANSPORTS = ["DBus", "Redis"]


def bus_notification_table(run, label):
    lines = [f"#### Bus notifications ({label}): two processes, a name and a two-entry userInfo (bare: an object, no userInfo)", "",
             "| transport | implementation | notifications/s | ns/notification | mallocs/notification (receiving side) | "
             "round trip µs (p50 of samples) | round-trip p99 µs | × Raw (throughput) | × Raw (round trip) |",
             "|:--|:--|--:|--:|--:|--:|--:|--:|--:|"]
    for transport in BUS_TRANSPORTS:
        # The bare rows (an object, no userInfo) are compared with the bare floor, the durable rows
        # (Redis Streams) with the durable floor.
        for peer in ("Raw", "Ours.Fields", "Ours", "Raw.Bare", "Ours.Bare", "Raw.Durable", "Ours.Fields.Durable", "Ours.Durable"):
            floor = "Raw.Bare" if peer.endswith(".Bare") else "Raw.Durable" if peer.endswith(".Durable") else "Raw"
            raw_tp, raw_rt = run.get(f"BusNotification.Throughput.{transport}.{floor}"), run.get(f"BusNotification.RoundTrip.{transport}.{floor}")
            tp, rt = run.get(f"BusNotification.Throughput.{transport}.{peer}"), run.get(f"BusNotification.RoundTrip.{transport}.{peer}")
            if not (tp or rt):
                continue
            p99 = rt.raw("p99Ns") if rt else None
            per_second = f"{1e9 / tp.per_op_ns(50):,.0f}" if tp else "–"
            x_tp = f"{tp.per_op_ns(50) / raw_tp.per_op_ns(50):.2f}×" if tp and raw_tp else "–"
            x_rt = f"{rt.per_op_ns(50) / raw_rt.per_op_ns(50):.2f}×" if rt and raw_rt else "–"
            lines.append(f"| {transport} | {peer} | {per_second} | {fmt(tp.per_op_ns(50)) if tp else '–'} | "
                         f"{fmt_count(tp.per_op('Malloc (total)')) if tp else '–'} | {fmt(rt.per_op_ns(50) / 1e3, 2) if rt else '–'} | "
                         f"{fmt(percentile(p99, 50) / 1e3, 2) if p99 else '–'} | {x_tp} | {x_rt} |")
    return lines if len(lines) > 4 else []


def bus_notification_targets(run, label, row):
    """The bus-notification targets: ours (the userInfo as BusFields, as the floor carries it typed) against
    C on the same library (libdbus-1, hiredis), one run; the [AnyHashable: Any] rows as information. The
    durable rows (Redis Streams, `.Durable`) against the raw library doing the same XADD/XREADGROUP/XACK."""
    for transport in BUS_TRANSPORTS:
        for scenario, what in (("Throughput", "cost per notification, throughput"), ("RoundTrip", "round trip p50")):
            for suffix, kind in (("", "bus"), (".Durable", "durable")):
                fields, dictionary, raw = (run.get(f"BusNotification.{scenario}.{transport}.{peer}{suffix}")
                                           for peer in ("Ours.Fields", "Ours", "Raw"))
                if fields and raw:
                    x = fields.per_op_ns(50) / raw.per_op_ns(50)
                    row(f"{kind} notifications over {transport} ≤ 1.3× the raw library ({what}; userInfo as BusFields)", label,
                        f"{x:.2f}×", x <= 1.3)
                if dictionary and raw:
                    x = dictionary.per_op_ns(50) / raw.per_op_ns(50)
                    row(f"(information) {kind} notifications over {transport} vs the raw library ({what}; userInfo as [AnyHashable: Any])",
                        label, f"{x:.2f}×", None)


def server_tables(run, label):
    lines = []
    for table in (fd_ping_pong_table, idle_table, timer_churn_table, timer_lateness_table, sparse_table, sparse_interleaved_table,
                  first_send_interleaved_table, echo_table, tls_table, cross_process_table,
                  bus_notification_table):
        rows = table(run, label)
        if rows:
            lines += rows + [""]
    return lines


# ----------------------------------------------------------------------------- SVG

def svg_bar_chart(title, subtitle, groups, series, value_label, path, log=False):
    """groups: list of (group label, {series: value}); series: list of (name, color, hatch?)."""
    width, left, right, top, bottom = 860, 200, 30, 70, 60
    bar_h, gap = 14, 10
    group_h = bar_h * len(series) + gap
    height = top + bottom + group_h * len(groups)
    values = [v for _, vals in groups for v in vals.values() if v]
    vmax = max(values) if values else 1
    vmin = min(values) if values else 1
    plot_w = width - left - right

    def x_of(v):
        if log:
            lo = 10 ** math.floor(math.log10(vmin))
            hi = 10 ** math.ceil(math.log10(vmax))
            return plot_w * (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        return plot_w * v / (vmax * 1.08)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">{title}</text>',
           f'<text x="{width / 2}" y="44" text-anchor="middle" fill="#555">{subtitle}</text>']
    # grid
    if log:
        lo = 10 ** math.floor(math.log10(vmin))
        hi = 10 ** math.ceil(math.log10(vmax))
        ticks = []
        t = lo
        while t <= hi * 1.0001:
            ticks.append(t)
            t *= 10
    else:
        step = 10 ** math.floor(math.log10(vmax * 1.08 / 5)) if vmax > 0 else 1
        for mult in (1, 2, 5, 10):
            if vmax * 1.08 / (step * mult) <= 8:
                step *= mult
                break
        ticks = [i * step for i in range(int(vmax * 1.08 / step) + 1)]
    for t in ticks:
        x = left + x_of(t)
        out.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height - bottom}" stroke="#e0e0e0"/>')
        label = f"{t:g}"
        out.append(f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle" fill="#555">{label}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 18}" text-anchor="middle">{value_label}</text>')
    y = top
    for label, vals in groups:
        out.append(f'<text x="{left - 8}" y="{y + group_h / 2 - gap / 2 + 4:.1f}" text-anchor="end">{label}</text>')
        for i, (name, color, hatch) in enumerate(series):
            v = vals.get(name)
            by = y + i * bar_h
            if v:
                w = max(1.0, x_of(v))
                opacity = "0.55" if hatch else "1"
                out.append(f'<rect x="{left}" y="{by}" width="{w:.1f}" height="{bar_h - 2}" fill="{color}" fill-opacity="{opacity}"/>')
                out.append(f'<text x="{left + w + 4:.1f}" y="{by + bar_h - 4}" font-size="10" fill="#333">{fmt(v, 2)}</text>')
        y += group_h
    # legend
    lx = left
    for name, color, hatch in series:
        opacity = "0.55" if hatch else "1"
        out.append(f'<rect x="{lx}" y="52" width="12" height="10" fill="{color}" fill-opacity="{opacity}"/>')
        out.append(f'<text x="{lx + 16}" y="61" font-size="11">{name}</text>')
        lx += 16 + 7 * len(name) + 18
    out.append("</svg>")
    Path(path).write_text("\n".join(out) + "\n")


def charts(runs, svg_dir, machine_line):
    svg_dir = Path(svg_dir)
    svg_dir.mkdir(parents=True, exist_ok=True)
    labels = [label for label, _ in runs]
    # Throughput: M msg/s, 1P and 2P, per run.
    series = []
    palette = {"1P": "#1f77b4", "2P": "#ff7f0e"}
    for label in labels:
        for producers in ("1P", "2P"):
            series.append((f"{producers} {label}", palette[producers], label == "pinned"))
    groups = []
    for peer in PEERS:
        vals = {}
        for label, run in runs:
            for producers in ("1P", "2P"):
                r = run.get(f"Throughput{producers}.{peer}")
                if r:
                    vals[f"{producers} {label}"] = 1e3 / r.per_op_ns(50)
        groups.append((peer, vals))
    svg_bar_chart("Throughput: 1M messages to one consumer thread (RunLoop.perform: 100k)", machine_line, groups, series,
                  "million messages per second (p50 of samples; longer is better)", svg_dir / "benchmarks-throughput.svg")
    # Round trip: µs, p50 and p99, per run (log scale).
    series = []
    palette = {"p50": "#2ca02c", "p99": "#d62728"}
    for label in labels:
        for p in ("p50", "p99"):
            series.append((f"{p} {label}", palette[p], label == "pinned"))
    groups = []
    for peer in PEERS:
        vals = {}
        for label, run in runs:
            r = run.get(f"RoundTrip.{peer}")
            if r:
                vals[f"p50 {label}"] = r.per_op_ns(50) / 1e3
                vals[f"p99 {label}"] = r.per_op_ns(99) / 1e3
        groups.append((peer, vals))
    svg_bar_chart("Round trip between two threads (1000 per sample)", machine_line, groups, series,
                  "microseconds per round trip, log scale (shorter is better)", svg_dir / "benchmarks-roundtrip.svg", log=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="append", required=True, help="LABEL=PATH to a .jmh.json export")
    parser.add_argument("--machine", help="file with the machine description (first line used in charts)")
    parser.add_argument("--svg-dir", help="where to write benchmarks-throughput.svg and benchmarks-roundtrip.svg")
    parser.add_argument("--markdown", help="write the tables here (default: stdout)")
    args = parser.parse_args()

    runs = []
    for spec in args.run:
        label, _, path = spec.partition("=")
        runs.append((label, load(path)))
    machine = Path(args.machine).read_text().strip() if args.machine else ""
    machine_line = machine.splitlines()[0] if machine else ""

    lines = []
    if machine:
        lines += ["```", machine, "```", ""]
    lines += ["### Targets (ratios within the same run)", ""] + targets(runs) + [""]
    for label, run in runs:
        lines += throughput_table(run, label) + [""]
        lines += latency_table(run, label) + [""]
        lines += other_table(run, label) + [""]
        lines += server_tables(run, label)
    text = "\n".join(lines) + "\n"
    if args.markdown:
        Path(args.markdown).write_text(text)
    else:
        sys.stdout.write(text)
    if args.svg_dir:
        charts(runs, args.svg_dir, machine_line)


if __name__ == "__main__":
    main()
