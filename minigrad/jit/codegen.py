"""Source generation: the body of a fused node becomes the text of a Numba kernel.

`kernel_source(body)` writes a Python module defining `kernel(*inputs, out)`, one loop nest that
computes the body's output element by element: each input element is loaded once, every operation
of the group is applied to it in registers, and one value is stored. The same generator emits CPU
kernels (`numba.njit`, optionally `parallel=True` with `prange`) and CUDA kernels (`numba.cuda.jit`,
a grid-stride loop); only the loop scaffolding differs: `_Operands` works out what is read and the
loop's layout, `_Kernel` writes the module and one element's statements, and one emitter per target
(`_CpuKernel`, `_CudaKernel`) writes the loops around them, matmul epilogues included.

Everything a kernel needs to know is static: shapes, dtypes and scalar constants are written into
the source, so the source *is* the structural cache key (`kernel_cache` names files by its hash)
and Numba can unroll, hoist and vectorise with constant trip counts.

Broadcasting costs nothing at run time. Every array is seen as flat (they are C-contiguous) and
each operand gets a stride per axis of the iteration space, 0 along broadcast axes; adjacent axes
that every operand treats alike are merged first (as numpy's iterator does), so a purely
elementwise group is one flat loop and a bias add is a row loop around a contiguous column loop.
Size-one operands (scalars) are loaded once, before the loops.

Types follow the traced graph: every operation computes in the dtype the trace recorded for it
(operands of another dtype are converted first, as numpy's ufunc loops do), and constants are typed
literals, so a float32 graph never silently computes in float64.

Math functions: in float32 CPU kernels, tanh, exp and sigmoid are the vectorisable functions of
`minigrad.jit.fastmath` (accurate to 1-2.5 ulp by default, its cheaper approximations with
`fast_math=True`), so that a loop calling them still compiles to SIMD code; `math.tanh` would be a
call into the C library per element. Every CPU loop also calls `prefer_wide_vectors()`, which lets
LLVM use 512-bit registers on CPUs with AVX-512. Other functions, float64 kernels and CUDA kernels
use `math` (on CUDA: the device's libdevice functions). Sigmoid is always 1 / (1 + e^-x) on the
right and e^x / (1 + e^x) on the left: it neither overflows nor cancels.
"""

import dataclasses
import hashlib
import math
import string
from pathlib import Path

import numpy as np

from .optable import TABLE, VIEWS


# Elements from which a CPU kernel runs its outer loop on all cores (prange). Waking a thread pool
# has a fixed cost, and on a small machine Numba's threads compete with BLAS's (which spin after each
# matrix product): small parallel kernels next to BLAS calls lose to serial ones, large ones win
# (the figures behind this threshold: benchmarks/README.md).
PARALLEL_THRESHOLD = 1 << 20
# minigrad.jit.fastmath's float32 functions, by name of the operation
ACCURATE_FUNCTIONS = {"tanh": "tanh_f32_accurate", "exp": "exp_f32_accurate", "sigmoid": "sigmoid_f32_accurate"}
FAST_FUNCTIONS = {"tanh": "tanh_f32", "exp": "exp_f32", "sigmoid": "sigmoid_f32"}
NUMBA_TYPES = {"bool": "boolean"}  # numpy dtype name -> numba type name, where they differ


@dataclasses.dataclass(frozen=True)
class Access:
    """One way the kernel reads an argument: argument `arg` seen with `shape` (which broadcasts to
    the iteration space). An input read directly and through a reshape gives two accesses."""

    arg: int
    shape: tuple


@dataclasses.dataclass(frozen=True)
class Layout:
    """The iteration space after merging axes: `shape`, and per access its strides (0 = broadcast)."""

    shape: tuple
    strides: tuple  # one tuple of ints per access, len(shape) each

    @classmethod
    def of(cls, shape, accesses, merge=True):
        """The layout of a loop over `shape` reading `accesses` (padded to its rank, numpy-style)."""
        rank = len(shape)
        padded = [(1,) * (rank - len(a.shape)) + tuple(a.shape) for a in accesses]
        # which operands are full-size along each axis; when merging, axes of length 1 are dropped
        axes = [(n, tuple(p[d] == n for p in padded)) for d, n in enumerate(shape) if n != 1 or not merge]
        merged = []
        for n, pattern in axes:
            if merge and merged and merged[-1][1] == pattern:
                merged[-1] = (merged[-1][0] * n, pattern)
            else:
                merged.append((n, pattern))
        sizes = tuple(n for n, _ in merged)
        strides = []
        for k in range(len(accesses)):
            stride, per_axis = 1, []
            for n, pattern in reversed(merged):
                per_axis.append(stride if pattern[k] else 0)
                stride *= n if pattern[k] else 1
            strides.append(tuple(reversed(per_axis)))
        return cls(sizes, tuple(strides))

    def offset(self, k, index):
        """The flat offset of access k at the loop indices `index` (names), as source text."""
        terms = [name if s == 1 else f"{name} * {s}" for name, s in zip(index, self.strides[k]) if s]
        return " + ".join(terms) or "0"

    def is_scalar(self, k):
        return not any(self.strides[k])


def kernel_source(body, *, target="cpu", parallel=None, fast_math=False, cache=True, libm=False):
    """The source of a module defining `kernel(*inputs, *conditions, out)` for a fused body.

    body: a Graph with one output: inputs, scalar constants, elementwise operations (and views),
        optionally led by one 2-D matmul whose result only the rest reads ("linear_epilogue").
    The kernel reads each input with its body shape (broadcast numpy-style against the output),
    then the boolean condition array of each `where` node in body order, and writes `out`, an
    array of the output's shape. Arrays must be C-contiguous (the explicit signature says so).
    target: "cpu" (numba.njit) or "cuda" (numba.cuda.jit).
    parallel: CPU only; None chooses parallel=True from PARALLEL_THRESHOLD elements on.
    fast_math: float32 tanh, exp and sigmoid use the cheaper approximations of `minigrad.jit.fastmath`
        (relative error < 1e-6) instead of its accurate functions (within 1-2.5 ulp); on CUDA,
        numba's fastmath flag (the hardware's approximations).
    cache: numba's on-disk cache (needs the source to live in a file, see `kernel_cache`).
    libm: CPU only; tanh and exp call the C library through `math`, one element at a time, and no
        wider vectors are asked for: the kernel as written naively, for comparison (chapter 9).
    """
    if target not in ("cpu", "cuda"):
        raise ValueError(f"kernel_source: target must be 'cpu' or 'cuda', got {target!r}")
    out = body.node(body.outputs[0])
    if parallel is None:
        parallel = math.prod(out.shape) >= PARALLEL_THRESHOLD
    emitter = _CpuKernel if target == "cpu" else _CudaKernel
    return emitter(body, parallel and target == "cpu", fast_math, cache, libm).source()


class _Operands:
    """What a kernel reads and how: its arguments (inputs, then `where` conditions), one access per
    distinct (argument, shape) it reads, and the layout of the loop over the output."""

    def __init__(self, body):
        self.nodes = {n.id: n for n in body.nodes}
        self.out = self.nodes[body.outputs[0]]
        self.matmul = next((n for n in body.nodes if n.op == "matmul"), None)
        self.conditions = [n for n in body.nodes if n.op == "where"]
        self.args = [f"a{k}" for k in range(len(body.inputs))] + [f"c{k}" for k in range(len(self.conditions))]
        self.arg_of = {i: k for k, i in enumerate(body.inputs)}
        self.arg_types = [(self.nodes[i].dtype, self.nodes[i].shape) for i in body.inputs]
        self.arg_types += [("bool", _condition(n).shape) for n in self.conditions]
        self.accesses = []
        self.reads = {}  # node id (or ("condition", id)) -> access index
        for node in body.nodes:
            if node.op not in ("input", "constant", "matmul") and node.op not in VIEWS:
                for source in node.inputs:
                    self._register(source)
        for k, node in enumerate(self.conditions):
            self.reads[("condition", node.id)] = self._access(len(body.inputs) + k, _condition(node).shape)
        out_access = Access(len(self.args), self.out.shape)  # the output, a pseudo-argument
        self.layout = Layout.of(self.out.shape, self.accesses + [out_access], merge=self.matmul is None)

    def _access(self, arg, shape):
        key = Access(arg, tuple(shape))
        if key not in self.accesses:
            self.accesses.append(key)
        return self.accesses.index(key)

    def _register(self, source):
        """Record how the operand `source` is read: an input directly, or an input through a view."""
        node = self.nodes[source]
        if node.op == "input" and source not in self.reads:
            self.reads[source] = self._access(self.arg_of[source], node.shape)
        elif node.op in VIEWS:
            root = self.nodes[node.inputs[0]]
            if root.op == "constant":
                return
            # reshape: the input's data seen with the new shape; broadcast_to: the input broadcasts itself
            shape = node.shape if node.op == "reshape" else root.shape
            self.reads[source] = self._access(self.arg_of[root.id], shape)


class _Kernel:
    """What every target's kernel shares: the module around the loops, and the statements computing
    one element (see `kernel_source`). A target's emitter, a subclass, writes the loops."""

    target = None
    flat = ""  # the suffix naming an argument's flat view ("f": CPU kernels flatten their arguments first)

    def __init__(self, body, parallel, fast_math, cache, libm=False):
        self.body, self.parallel, self.fast_math, self.cache = body, parallel, fast_math, cache
        self.vector_math = self.target == "cpu" and not libm  # fastmath's functions and 512-bit vectors
        self.operands = _Operands(body)
        self.layout = self.operands.layout
        self.constants = {}  # literal text -> global name
        self.imports = {"import numpy as np"}

    def loops(self):
        """The kernel's body: the lines of the loops over the output, computing every element."""
        raise NotImplementedError

    def decorator(self, signature):
        """The line compiling `kernel` for this target with the explicit `signature`."""
        raise NotImplementedError

    def array_type(self, dtype, ndim):
        """Numba's type of an argument array of `dtype` with `ndim` axes, as this target passes it."""
        raise NotImplementedError

    def matmul_value(self, out):
        """The name of the product's element inside the epilogue (`out`: the output element)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- the module
    def source(self):
        body = self.loops()
        out = self.operands.out
        types = [self.array_type(dtype, len(shape)) for dtype, shape in self.operands.arg_types]
        signature = ", ".join(types + [self.array_type(out.dtype, len(out.shape))])
        decorator = self.decorator(signature)
        header = [
            f'"""Generated by minigrad.jit.codegen: a {self.target.upper()} kernel for one fused group.',
            "",
            *(f"    {line}" for line in _listing(self.body)),
            '"""',
            *sorted(self.imports),
            *([""] + [f"{name} = {text}" for text, name in self.constants.items()] if self.constants else []),
            "",
            "",
            decorator,
            f"def kernel({', '.join(self.operands.args + ['out'])}):",
        ]
        return "\n".join(header + [f"    {line}" for line in body]) + "\n"

    # ---------------------------------------------------------------- one element
    def _read(self, k):
        return f"s{k}" if self.layout.is_scalar(k) else f"x{k}"

    def _scalar_loads(self):
        return [
            f"s{k} = {self.operands.args[access.arg]}{self.flat}[0]"
            for k, access in enumerate(self.operands.accesses)
            if self.layout.is_scalar(k)
        ]

    def _element(self, index):
        """Statements computing the output at loop indices `index` and storing it."""
        operands = self.operands
        lines = [
            f"x{k} = {operands.args[access.arg]}{self.flat}[{self.layout.offset(k, index)}]"
            for k, access in enumerate(operands.accesses)
            if not self.layout.is_scalar(k)
        ]
        out = f"out{self.flat}[{self.layout.offset(len(operands.accesses), index)}]"
        names = {}
        for position, node in enumerate(self.body.nodes):
            if node.op == "constant":
                names[node.id] = self._literal(np.asarray(node.param_dict["value"]).item(), node.dtype)
            elif node.op in VIEWS and operands.nodes[node.inputs[0]].op == "constant":
                names[node.id] = names[node.inputs[0]]
            elif node.id in operands.reads:
                names[node.id] = self._read(operands.reads[node.id])
            elif node.op == "matmul":
                names[node.id] = self.matmul_value(out)
            elif node.op not in VIEWS and node.op != "input":
                values = [self._cast(names[i], operands.nodes[i].dtype, node.dtype) for i in node.inputs]
                if node.op == "where":
                    values.append(self._read(operands.reads[("condition", node.id)]))
                names[node.id] = f"v{position}"
                lines.append(f"v{position} = {self._expression(node, values)}")
        return lines + [f"{out} = {names[operands.out.id]}"]

    def _cast(self, name, source, target):
        return name if source == target or target == "bool" else f"np.{target}({name})"

    def _literal(self, value, dtype):
        """A typed constant: a module-level global like `K0 = np.float32(0.5)`."""
        if dtype == "bool":
            return "True" if value else "False"
        text = f"np.{dtype}({_number(value, dtype)})"
        if text not in self.constants:
            self.constants[text] = f"K{len(self.constants)}"
        return self.constants[text]

    def _function(self, name, dtype):
        """The name of the function computing op `name` in `dtype`: fastmath's vectorisable one for
        float32 on the CPU, else `math`'s."""
        vector = self._vector_function(name, dtype)
        if vector is not None:
            return vector
        self.imports.add("import math")
        return f"math.{name}"

    def _vector_function(self, name, dtype):
        """fastmath's vectorisable float32 function for op `name` on the CPU, or None."""
        table = FAST_FUNCTIONS if self.fast_math else ACCURATE_FUNCTIONS
        if not (self.vector_math and dtype == "float32" and name in table):
            return None
        self.imports.add(f"from minigrad.jit.fastmath import {table[name]}  # version {_fastmath_version()}")
        return table[name]

    def _expression(self, node, a):
        """The source of `node` applied to operand sources `a`, computed in node.dtype (from `optable`)."""
        facts = TABLE.get(node.op)
        if facts is None or facts.expression is None:
            raise NotImplementedError(f"kernel_source: no code for op {node.op!r} ({node})")
        if node.op == "power":
            return self._power(a[0], float(node.param_dict["exponent"]), node.dtype)
        vector = self._vector_function(node.op, node.dtype)  # sigmoid in one call, not its formula
        if vector is not None:
            return f"{vector}({a[0]})"
        context = _Context(self, node.dtype, node.param_dict)
        if callable(facts.expression):
            return facts.expression(a, node.param_dict, context)
        return string.Formatter().vformat(facts.expression, a, context)

    def _power(self, x, exponent, dtype):
        """x ** exponent; small integer powers as products (a call to pow does not vectorise)."""
        if exponent in (1, 2, 3, 4):
            return " * ".join([x] * int(exponent))
        if exponent == 0:
            return self._literal(1, dtype)
        if exponent == -1:
            return f"{self._literal(1, dtype)} / {x}"
        if exponent == 0.5:
            self.imports.add("import math")
            return f"math.sqrt({x})"
        return f"{x} ** {self._literal(exponent, dtype)}"


class _CpuKernel(_Kernel):
    """numba.njit: a loop nest over the merged layout (the outer loop a prange when parallel), or for a
    matmul epilogue, one row of the product at a time."""

    target = "cpu"
    flat = "f"

    def decorator(self, signature):
        self.imports.add("from numba import njit, prange")
        options = f'parallel={self.parallel}, error_model="numpy", cache={self.cache}'
        return f'@njit("void({signature})", {options})'

    def array_type(self, dtype, ndim):
        name = NUMBA_TYPES.get(dtype, dtype)
        if ndim == 0:
            return f"Array({name}, 0, 'C')"
        return f"{name}[{', '.join([':'] * (ndim - 1) + ['::1'])}]"

    def matmul_value(self, out):
        return out  # the row is accumulated in the output itself

    def loops(self):
        lines = [f"{name}f = {name}.reshape(-1)" for name in self.operands.args + ["out"]]
        lines += self._scalar_loads()
        if self.operands.matmul is not None:
            return lines + self._matmul_rows()
        index = [f"i{d}" for d in range(len(self.layout.shape))]
        for d, n in enumerate(self.layout.shape):
            loop = "prange" if self.parallel and d == 0 else "range"
            lines.append("    " * d + f"for {index[d]} in {loop}({n}):")
        return lines + ["    " * len(index) + line for line in self._wide() + self._element(index)]

    def _wide(self):
        """The call that lets LLVM vectorise the function around this loop with 512-bit registers
        (inside the loop, so that it reaches the function Numba outlines for a prange loop too)."""
        if not self.vector_math:
            return []
        self.imports.add(f"from minigrad.jit.fastmath import prefer_wide_vectors  # version {_fastmath_version()}")
        return ["prefer_wide_vectors()"]

    def _matmul_rows(self):
        """Row i of out accumulates x[i, :] @ W (the row stays in cache), then the epilogue runs on it."""
        operands = self.operands
        n, m = operands.out.shape
        x, w = (operands.args[operands.arg_of[i]] + "f" for i in operands.matmul.inputs)
        inner = operands.nodes[operands.matmul.inputs[0]].shape[1]
        lines = [
            f"for i0 in {'prange' if self.parallel else 'range'}({n}):",
            *(f"    {line}" for line in self._wide()),
            f"    for i1 in range({m}):",
            f"        outf[i0 * {m} + i1] = {self._literal(0, operands.matmul.dtype)}",
            f"    for p in range({inner}):",
            f"        xv = {x}[i0 * {inner} + p]",
            f"        for i1 in range({m}):",
            f"            outf[i0 * {m} + i1] += xv * {w}[p * {m} + i1]",
            f"    for i1 in range({m}):",
        ]
        return lines + ["        " + line for line in self._element(["i0", "i1"])]


class _CudaKernel(_Kernel):
    """numba.cuda.jit: a grid-stride loop over the flat output, the multi-index recovered from the flat
    index; a matmul epilogue accumulates its element's dot product first."""

    target = "cuda"

    def decorator(self, signature):
        self.imports.add("from numba import cuda")
        return f'@cuda.jit("void({signature})"{", fastmath=True" if self.fast_math else ""})'

    def array_type(self, dtype, ndim):
        return f"{NUMBA_TYPES.get(dtype, dtype)}[::1]"  # the CUDA runner passes every array flat

    def matmul_value(self, out):
        return "acc"

    def loops(self):
        operands, shape = self.operands, self.layout.shape
        lines = self._scalar_loads()
        lines += ["start = cuda.grid(1)", "stride = cuda.gridsize(1)"]
        lines.append(f"for i in range(start, {math.prod(operands.out.shape)}, stride):")
        index, inner = ["i"], []
        if len(shape) > 1:  # the multi-index from the flat index, innermost axis fastest
            index, rest = [f"i{d}" for d in range(len(shape))], "i"
            for d in range(len(shape) - 1, 0, -1):
                inner.append(f"i{d} = {rest} % {shape[d]}")
                inner.append(f"{'i0' if d == 1 else f'r{d}'} = {rest} // {shape[d]}")
                rest = f"r{d}"
        if operands.matmul is not None:
            x, w = (operands.args[operands.arg_of[i]] for i in operands.matmul.inputs)
            k, m = operands.nodes[operands.matmul.inputs[0]].shape[1], operands.out.shape[1]
            inner += [
                f"acc = {self._literal(0, operands.matmul.dtype)}",
                f"for p in range({k}):",
                f"    acc += {x}[i0 * {k} + p] * {w}[p * {m} + i1]",
            ]
        return lines + ["    " + line for line in inner + self._element(index)]


class _Context(dict):
    """The named fields of an `optable` expression, each made when the template asks for it (so that
    no unused literal becomes a global): typed literals, math functions, the node's params."""

    def __init__(self, kernel, dtype, params):
        super().__init__()
        self.kernel, self.dtype, self.params = kernel, dtype, params

    def literal(self, value):
        return self.kernel._literal(value, self.dtype)

    def __missing__(self, name):
        if name in ("one", "zero"):
            return self.literal(1 if name == "one" else 0)
        if name in self.params:
            return self.params[name]
        return self.kernel._function(name, self.dtype)


def _condition(node):
    return np.asarray(node.param_dict["condition"])


def condition_arrays(body):
    """The arrays a kernel of `body` takes after its inputs: each `where` node's condition, C-contiguous."""
    return [np.ascontiguousarray(_condition(n)) for n in body.nodes if n.op == "where"]


def _listing(body):
    """The body as positional pseudo-code (no node ids: equal structures give equal sources)."""
    names = {i: f"a{k}" for k, i in enumerate(body.inputs)}
    conditions = iter(range(len(body.nodes)))
    lines = []
    for position, node in enumerate(body.nodes):
        if node.op == "input":
            lines.append(f"{names[node.id]}: input {node.shape} {node.dtype}")
            continue
        names[node.id] = f"v{position}"
        args = [names[i] for i in node.inputs]
        if node.op == "constant":
            args = [_number(np.asarray(node.param_dict["value"]).item(), node.dtype)]
        for name, value in node.params:
            if name == "condition":
                args.append(f"condition=c{next(conditions)}")
            elif name != "value":
                args.append(f"{name}={value}")
        lines.append(f"v{position} = {node.op}({', '.join(args)}) : {node.shape} {node.dtype}")
    return lines + [f"out = {names[body.outputs[0]]}"]


def _number(value, dtype):
    """`value` as the shortest literal that gives the same `dtype` number ("inf" and "nan" quoted)."""
    text = str(np.dtype(dtype).type(value))
    return text if np.isfinite(float(value)) else repr(text)


def _fastmath_version():
    """A fingerprint of fastmath.py: kernels that inline it get a new cache key when it changes."""
    path = Path(__file__).with_name("fastmath.py")
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]

