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


def plot_memory_plan(graph, plan, ax=None, title=None, label_ops=None, groups=None):
    """Draw `plan` as a timeline of buffers (x: step, y: address) on `ax` (a new figure if None).

    Each value is a rectangle from its definition to its last use at its planned offset; dashed
    lines mark the plan's peak and the liveness lower bound. Rectangles are coloured by the
    operation that made the value, or by `groups` when given: a mapping node id -> label (such as
    "forward pass" / "backward pass"), which reads better than a dozen op colours when the point
    is which values live long. The legend sits outside the axes, right of them, so that it never
    hides a rectangle.
    label_ops: write op names inside the rectangles (default: when the graph has at most 40 nodes).
    Returns the axes.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4))
    label_ops = len(graph.nodes) <= 40 if label_ops is None else label_ops
    scale, unit = _unit(max(plan.peak_bytes, 1))
    group_of = {i: graph.node(i).op if groups is None else groups[i] for i in plan.offsets}
    # ops alphabetically; given groups in order of first appearance (forward before backward)
    names = sorted(set(group_of.values())) if groups is None else list(dict.fromkeys(group_of[i] for i in sorted(group_of)))
    palette = plt.cm.tab10(np.arange(len(names))) if len(names) <= 10 else plt.cm.tab20(np.linspace(0, 1, len(names)))
    colors = dict(zip(names, palette))
    for i, offset in plan.offsets.items():
        node, (first, last) = graph.node(i), plan.intervals[i]
        height = node.nbytes / scale
        ax.add_patch(
            plt.Rectangle((first, offset / scale), last - first + 1, height, facecolor=colors[group_of[i]],
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
    lines, line_labels = ax.get_legend_handles_labels()
    boxes = [plt.Rectangle((0, 0), 1, 1, facecolor=colors[name], edgecolor="black", linewidth=0.4) for name in names]
    ax.legend(lines + boxes, line_labels + names, fontsize=8, ncol=1 + len(names) // 12, loc="upper left",
              bbox_to_anchor=(1.01, 1), borderaxespad=0)
    return ax


def live_bytes_over_time(plan, steps):
    """Bytes of the values alive at each step 0..steps (the curve whose maximum is the lower bound)."""
    live = np.zeros(steps + 1, dtype=np.int64)
    for i, (first, last) in plan.intervals.items():
        live[first : last + 1] += plan.sizes[i]
    return live
