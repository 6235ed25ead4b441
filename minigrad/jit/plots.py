"""Pictures of memory plans (matplotlib, imported only here).

A plan is best seen as rectangles in the plane of time and address: value v occupies the addresses
[offset, offset + bytes) during the steps [first, last] of its life. A valid plan is a set of
rectangles that never overlap; its peak is the height of the highest one; the liveness lower bound
is the tallest stack of values alive at one moment, whatever their addresses.
"""

import numpy as np

from .memory_plan import live_bytes_peak

UNITS = [(2**20, "MiB"), (2**10, "KiB"), (1, "bytes")]


def _unit(nbytes):
    return next((scale, name) for scale, name in UNITS if nbytes >= 4 * scale or scale == 1)


def plot_memory_plan(graph, plan, ax=None, title=None, label_ops=None):
    """Draw `plan` as a timeline of buffers (x: step, y: address) on `ax` (a new figure if None).

    Each value is a rectangle from its definition to its last use at its planned offset, coloured
    by the operation that made it; dashed lines mark the plan's peak and the liveness lower bound.
    label_ops: write op names inside the rectangles (default: when the graph has at most 40 nodes).
    Returns the axes.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4))
    label_ops = len(graph.nodes) <= 40 if label_ops is None else label_ops
    scale, unit = _unit(max(plan.peak_bytes, 1))
    ops = sorted({graph.node(i).op for i in plan.offsets})
    colors = dict(zip(ops, plt.cm.tab20(np.linspace(0, 1, max(len(ops), 1)))))
    for i, offset in plan.offsets.items():
        node, (first, last) = graph.node(i), plan.intervals[i]
        height = node.nbytes / scale
        ax.add_patch(
            plt.Rectangle((first, offset / scale), last - first + 1, height, facecolor=colors[node.op],
                          edgecolor="black", linewidth=0.4, alpha=0.85)
        )
        if label_ops and height > 0.04 * plan.peak_bytes / scale:
            ax.text(first + 0.1, (offset + node.nbytes / 2) / scale, f"%{i} {node.op}", fontsize=7, va="center")
    lower = live_bytes_peak(plan.intervals, plan.sizes)
    ax.axhline(plan.peak_bytes / scale, color="tab:red", linestyle="--", linewidth=1, label=f"peak {plan.peak_bytes / scale:.3g} {unit}")
    ax.axhline(lower / scale, color="tab:green", linestyle=":", linewidth=1.5, label=f"lower bound {lower / scale:.3g} {unit}")
    ax.set_xlim(0, len(graph.nodes) + 1)
    ax.set_ylim(0, max(plan.peak_bytes, 1) / scale * 1.08)
    ax.set_xlabel("step (position in the graph)")
    ax.set_ylabel(f"address ({unit})")
    ax.set_title(title or f"memory plan ({plan.strategy}): {len(plan.offsets)} values")
    ax.add_artist(ax.legend(loc="upper right", fontsize=8))  # kept when the second legend replaces ax.legend_
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=colors[op]) for op in ops]
    ax.legend(handles, ops, fontsize=7, ncol=max(1, len(ops) // 8), loc="upper left", bbox_to_anchor=(1.01, 1))
    return ax


def live_bytes_over_time(plan, steps):
    """Bytes of the values alive at each step 0..steps (the curve whose maximum is the lower bound)."""
    live = np.zeros(steps + 1, dtype=np.int64)
    for i, (first, last) in plan.intervals.items():
        live[first : last + 1] += plan.sizes[i]
    return live
