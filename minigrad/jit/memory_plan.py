"""Memory planning: give every intermediate of a static graph a place in one arena, reusing memory.

Eager execution allocates each result when it is computed and frees it when Python drops the last
reference. A static graph knows ahead of time when each value is defined and when it is read for
the last time (its *liveness interval*), so all allocations can be decided before running: two
values whose intervals do not overlap can share the same bytes (Chen et al. 2016 call this memory
sharing; TensorFlow and XLA plan buffers the same way).

Three numbers frame a plan:

* no reuse: the sum of all buffer sizes (every value keeps its own memory);
* the liveness lower bound: the largest total size of the values live at any one step; no plan
  can use less, since those values all exist at once;
* the plan's peak: the arena size it needs. Only fragmentation separates it from the lower bound.

Two strategies are offered. "best_fit" is what a runtime allocator can do without seeing the
future: at each definition, the smallest free block that fits; blocks are freed after their last
use. "greedy_by_size" uses the whole schedule, which only a static graph has: place the largest
values first, each at the lowest-waste gap among the already placed values whose lifetimes it
overlaps (Pisarchyk and Lee 2020). Planned values are the results of operations; inputs and
constants live outside the arena. Outputs stay live to the end, since they are returned.
"""

import bisect
import dataclasses

from ..errors import MinigradError
from .ir import SOURCES

ALIGNMENT = 64  # bytes: every buffer starts on a cache line, which vectorised kernels like


class InvalidPlan(MinigradError, ValueError):
    """A memory plan that would let two live values overwrite each other (or is incomplete)."""


@dataclasses.dataclass
class MemoryPlan:
    """Where each planned value lives: `offsets[id]` bytes into an arena of `peak_bytes`.

    `sizes[id]` is the bytes reserved (the value's size rounded up to ALIGNMENT) and
    `intervals[id] = (first, last)` the steps (positions in `graph.nodes`) between its definition
    and its last use, both included; outputs last until step len(graph.nodes).
    """

    offsets: dict
    sizes: dict
    intervals: dict
    peak_bytes: int
    strategy: str = "custom"

    @property
    def no_reuse_bytes(self):
        """The memory without sharing: every value in its own buffer."""
        return sum(self.sizes.values())

    @property
    def lower_bound_bytes(self):
        """max over steps t of the bytes of the values live at t: what any valid plan needs."""
        return live_bytes_peak(self.intervals, self.sizes)

    def summary(self):
        """The plan's figures as a dict (bytes and ratios), for printing and benchmarks."""
        return {
            "strategy": self.strategy,
            "values": len(self.sizes),
            "peak_bytes": self.peak_bytes,
            "no_reuse_bytes": self.no_reuse_bytes,
            "lower_bound_bytes": self.lower_bound_bytes,
            "peak_over_no_reuse": self.peak_bytes / max(self.no_reuse_bytes, 1),
            "peak_over_lower_bound": self.peak_bytes / max(self.lower_bound_bytes, 1),
        }


def aligned(nbytes):
    """`nbytes` rounded up to a multiple of ALIGNMENT (at least one ALIGNMENT for empty values)."""
    return max(-(-nbytes // ALIGNMENT), 1) * ALIGNMENT


def liveness(graph):
    """{id: (first, last)} for every operation's value: defined at step `first`, last read at `last`.

    Steps are positions in `graph.nodes`. A value nobody reads dies where it is born; an output
    lives to step len(graph.nodes), after the last operation (it is handed to the caller).
    """
    intervals = {n.id: [step, step] for step, n in enumerate(graph.nodes) if n.op not in SOURCES}
    for step, node in enumerate(graph.nodes):
        for source in node.inputs:
            if source in intervals:
                intervals[source][1] = max(intervals[source][1], step)
    for output in graph.outputs:
        if output in intervals:
            intervals[output][1] = len(graph.nodes)
    return {i: tuple(interval) for i, interval in intervals.items()}


def live_bytes_peak(intervals, sizes):
    """The largest total size of values whose intervals contain a common step (a sweep over steps)."""
    if not intervals:
        return 0
    change = [0] * (max(last for _, last in intervals.values()) + 2)
    for i, (first, last) in intervals.items():
        change[first] += sizes[i]
        change[last + 1] -= sizes[i]
    peak = live = 0
    for delta in change:
        live += delta
        peak = max(peak, live)
    return peak


def plan_memory(graph, strategy="greedy_by_size"):
    """A `MemoryPlan` for `graph`: strategy "greedy_by_size" (offline), "best_fit" (online) or "none"."""
    planners = {"greedy_by_size": _greedy_by_size, "best_fit": _best_fit, "none": _no_reuse}
    if strategy not in planners:
        raise ValueError(f"plan_memory: unknown strategy {strategy!r}; choose one of {sorted(planners)}")
    intervals = liveness(graph)
    sizes = {n.id: aligned(n.nbytes) for n in graph.nodes if n.id in intervals}
    offsets = planners[strategy](intervals, sizes)
    peak = max((offsets[i] + sizes[i] for i in offsets), default=0)
    return MemoryPlan(offsets, sizes, intervals, peak, strategy)


def _no_reuse(intervals, sizes):
    offsets, top = {}, 0
    for i in sorted(intervals, key=lambda i: intervals[i][0]):
        offsets[i], top = top, top + sizes[i]
    return offsets


def _greedy_by_size(intervals, sizes):
    """Largest first; each at the smallest gap (between placed, overlapping values) that fits."""
    placed, offsets = [], {}  # placed: (offset, size, first, last), in placement order
    for i in sorted(intervals, key=lambda i: (-sizes[i], intervals[i][0])):
        first, last = intervals[i]
        blocking = sorted((o, s) for o, s, f, l in placed if f <= last and first <= l)
        best, best_waste, cursor = None, None, 0
        for offset, size in blocking:
            gap = offset - cursor
            if gap >= sizes[i] and (best is None or gap - sizes[i] < best_waste):
                best, best_waste = cursor, gap - sizes[i]
            cursor = max(cursor, offset + size)
        offsets[i] = cursor if best is None else best
        placed.append((offsets[i], sizes[i], first, last))
    return offsets


def _best_fit(intervals, sizes):
    """In order of definition: release the values whose last use has passed, then take the
    smallest free block that fits (or grow the arena). Released blocks merge with free neighbours."""
    free, offsets, top = [], {}, 0  # free: [offset, size] blocks below `top`, sorted by offset
    order = sorted(intervals, key=lambda i: intervals[i][0])
    by_death, dead = sorted(order, key=lambda i: intervals[i][1]), 0
    for i in order:
        while dead < len(by_death) and intervals[by_death[dead]][1] < intervals[i][0]:
            _release(free, offsets[by_death[dead]], sizes[by_death[dead]])
            dead += 1
        offsets[i], top = _take(free, sizes[i], top)
    return offsets


def _take(free, size, top):
    """(offset, new top) of a block of `size` bytes: the smallest free block that fits, else the
    arena grows (from the free block that ends at the top, if there is one)."""
    fitting = [block for block in free if block[1] >= size]
    if fitting:
        block = min(fitting, key=lambda b: (b[1], b[0]))
        offset = block[0]
        block[0], block[1] = block[0] + size, block[1] - size
        if block[1] == 0:
            free.remove(block)
        return offset, top
    if free and free[-1][0] + free[-1][1] == top:
        offset = free.pop()[0]
        return offset, offset + size
    return top, top + size


def _release(free, offset, size):
    """Return [offset, offset + size) to the sorted free list, merged with adjacent free blocks."""
    k = bisect.bisect(free, [offset, size])
    free.insert(k, [offset, size])
    if k + 1 < len(free) and free[k][0] + free[k][1] == free[k + 1][0]:
        free[k][1] += free.pop(k + 1)[1]
    if k > 0 and free[k - 1][0] + free[k - 1][1] == free[k][0]:
        free[k - 1][1] += free.pop(k)[1]


def check_plan(graph, plan):
    """Raise `InvalidPlan` unless every operation's value has room in the arena and no two values
    live at the same step share a byte.

    Independent of the planner: liveness is recomputed here from the graph, straight from the
    definition (first step: where the node is; last: its last reader, or the end for an output),
    and only the real sizes (not the aligned ones) must be disjoint.
    """
    step = {n.id: k for k, n in enumerate(graph.nodes)}
    last = {n.id: step[n.id] for n in graph.nodes if n.op not in SOURCES}
    for n in graph.nodes:
        for source in n.inputs:
            if source in last:
                last[source] = max(last[source], step[n.id])
    last.update({o: len(graph.nodes) for o in graph.outputs if o in last})
    values = {n.id: n for n in graph.nodes if n.id in last}
    missing = sorted(set(values) - set(plan.offsets))
    if missing:
        raise InvalidPlan(f"check_plan: no buffer for {', '.join(str(values[i]) for i in missing[:3])}")
    for i, node in values.items():
        offset = plan.offsets[i]
        if offset < 0 or offset + node.nbytes > plan.peak_bytes:
            raise InvalidPlan(
                f"check_plan: {node} occupies bytes [{offset}, {offset + node.nbytes}), outside the arena of "
                f"{plan.peak_bytes} bytes"
            )
    live = []  # values sorted by definition; `live` holds those whose interval is still open
    for i in sorted(values, key=step.get):
        live = [j for j in live if last[j] >= step[i]]
        for j in live:
            _check_disjoint(values[j], values[i], plan, (step[j], last[j]), (step[i], last[i]))
        live.append(i)


def _check_disjoint(a, b, plan, interval_a, interval_b):
    start_a, start_b = plan.offsets[a.id], plan.offsets[b.id]
    if start_a < start_b + b.nbytes and start_b < start_a + a.nbytes:
        raise InvalidPlan(
            f"check_plan: {a} (live at steps {interval_a[0]}..{interval_a[1]}, bytes [{start_a}, {start_a + a.nbytes})) "
            f"and {b} (live at steps {interval_b[0]}..{interval_b[1]}, bytes [{start_b}, {start_b + b.nbytes})) "
            f"are live at the same time in overlapping memory"
        )
