"""Chapter 01's control: book depth and message count, and the latency distribution they give."""

from __future__ import annotations

import ipywidgets as widgets

from edumatcher.kit.figure_control import FigureControl
from edumatcher.kit.message_path import encode_workload, handling_latencies, summarise_latencies
from edumatcher.kit.plots import latency_histogram
from edumatcher.workloads import steady_state

__all__ = ["latency_explorer", "draw_latency"]


def draw_latency(depth: int, messages: int, seed: int = 1) -> tuple[object, ...]:
    """Handle ``steady_state(messages, depth=depth)`` on a fresh engine; the histogram of service times and its figures."""
    latencies = handling_latencies(encode_workload(steady_state(messages, seed=seed, depth=depth)))
    s = summarise_latencies(latencies)
    note = widgets.HTML(
        f"<p>{s.count:,} messages at depth {depth:,}: p50 <b>{s.p50 / 1e3:,.1f} µs</b>, "
        f"p99 <b>{s.p99 / 1e3:,.1f} µs</b>, max <b>{s.max / 1e3:,.1f} µs</b>; "
        f"{s.throughput:,.0f} messages/s back to back.</p>")
    return latency_histogram(latencies, title=f"Service time per message (no queueing), book depth about {depth:,}"), note


def latency_explorer(*, seed: int = 1) -> FigureControl:
    """Dropdowns for the book depth the workload holds and the number of messages; draws on every change."""
    controls = {
        "depth": widgets.Dropdown(options=[100, 1_000, 10_000], value=1_000, description="depth"),
        "messages": widgets.Dropdown(options=[5_000, 20_000], value=5_000, description="messages"),
    }
    return FigureControl(lambda depth, messages: draw_latency(depth, messages, seed), controls,
                         caption="Which figure moves when the book gets deeper: p50, p99 or max?")
