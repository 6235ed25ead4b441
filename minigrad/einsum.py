"""`einsum`: Einstein summation, lowered to the primitives minigrad already has.

An equation such as "bij,bjk->bik" names each operand's axes with letters; letters shared by two
operands are multiplied together, and letters missing from the output are summed. Rather than a
primitive with its own derivative rules, the equation becomes a sequence of existing operations
(as tinygrad lowers its ops): a repeated letter in one operand takes a diagonal, a letter no other
operand or the output needs is summed at once, and each pair of operands is contracted by one
batched matrix product after a transpose and reshape. Derivatives of every order and the jit's
tracing then come from those operations, and the contraction runs in BLAS.
"""

import string

import numpy as np

from .errors import ShapeError
from .tensor import Tensor


def einsum(equation, *operands):
    """Einstein summation, as `torch.einsum(equation, *operands)` (operands may also come as one
    list): "ij,jk->ik" is a matrix product, "bij,bjk->bik" a batched one, "ii->i" a diagonal,
    "i,j->ij" an outer product, "...ij->...ji" a transpose of the last two axes.

    Without "->", the output is the letters that appear once, in alphabetical order (after "..."'s
    axes); an ellipsis stands for the same broadcast axes in every operand, and size-1 axes
    broadcast. Letters are a–z and A–Z; spaces are ignored.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the first argument is the equation, a string such as 'ij,jk->ik'; got {type(equation).__name__}")
    tensors = [x if isinstance(x, Tensor) else Tensor(x) for x in operands]
    inputs, output = _parse(equation, [t.ndim for t in tensors])
    sizes = _sizes(equation, inputs, tensors)
    terms = []
    for letters, t in zip(inputs, tensors):
        letters, t = _distinct(equation, letters, t)
        shape = tuple(sizes[c] for c in letters)
        terms.append((letters, t.broadcast_to(shape) if t.shape != shape else t))
    letters, result = _sum_unneeded(*terms[0], output, terms[1:])
    for k in range(1, len(terms)):
        other_letters, other = _sum_unneeded(*terms[k], output + letters, terms[k + 1 :])
        letters, result = _contract(letters, result, other_letters, other, _needed(output, terms[k + 1 :]))
    return _arranged(result, letters, [[c] for c in output], {})


def _parse(equation, ndims):
    """The equation in explicit form: one string of distinct-per-axis letters per operand (an
    ellipsis replaced by letters the equation does not use) and the output's letters."""
    compact = equation.replace(" ", "")
    left, arrow, right = compact.partition("->")
    specs = left.split(",")
    if len(specs) != len(ndims):
        raise ShapeError(f"einsum: the equation {equation!r} names {len(specs)} operand(s), but {len(ndims)} were given")
    for spec in specs + ([right] if arrow else []):
        bad = set(spec.replace("...", "")) - set(string.ascii_letters)
        if bad or spec.count("...") > 1:
            raise ShapeError(f"einsum: in {equation!r}, subscripts must be letters with at most one '...' per operand, got {spec!r}")
    spare = iter(sorted(set(string.ascii_letters) - set(compact)))
    width = max([ndim - len(spec.replace("...", "")) for spec, ndim in zip(specs, ndims) if "..." in spec], default=0)
    ellipsis = "".join(next(spare) for _ in range(width))
    inputs = []
    for index, (spec, ndim) in enumerate(zip(specs, ndims)):
        named = len(spec.replace("...", ""))
        if ndim < named or (ndim != named and "..." not in spec):
            raise ShapeError(f"einsum: operand {index} has {ndim} dimension(s), but {spec!r} in {equation!r} names {named}")
        inputs.append(spec.replace("...", ellipsis[width - (ndim - named) :]))
    if not arrow:
        counts = "".join(specs).replace("...", "")
        return inputs, ellipsis + "".join(sorted(c for c in set(counts) if counts.count(c) == 1))
    output = right.replace("...", ellipsis)
    for c in output:
        if output.count(c) > 1:
            raise ShapeError(f"einsum: output subscript {c!r} appears more than once in {equation!r}")
        if not any(c in spec for spec in inputs):
            raise ShapeError(f"einsum: output subscript {c!r} in {equation!r} appears in no operand")
    return inputs, output


def _sizes(equation, inputs, tensors):
    """letter -> its length, checking that every operand agrees (or has 1 there, which broadcasts)."""
    sizes, where = {}, {}
    for index, (letters, t) in enumerate(zip(inputs, tensors)):
        for c, n in zip(letters, t.shape):
            if sizes.get(c, 1) == 1:
                sizes[c], where[c] = n, index
            elif n not in (1, sizes[c]):
                raise ShapeError(
                    f"einsum: subscript {c!r} of {equation!r} has length {sizes[c]} in operand {where[c]} and {n} in operand {index} "
                    f"(operand shapes {', '.join(str(x.shape) for x in tensors)})"
                )
    return sizes


def _distinct(equation, letters, tensor):
    """The operand with each repeated letter (as in "ii") reduced to its diagonal: one axis per letter."""
    while len(set(letters)) < len(letters):
        c = next(c for c in letters if letters.count(c) > 1)
        first, second = letters.index(c), letters.index(c, letters.index(c) + 1)
        n, m = tensor.shape[first], tensor.shape[second]
        if n != m:
            raise ShapeError(f"einsum: subscript {c!r} repeats in one operand of {equation!r} over axes of lengths {n} and {m}")
        shape = [1] * tensor.ndim
        shape[first], shape[second] = n, n
        diagonal = Tensor(np.eye(n, dtype=tensor.dtype).reshape(shape))
        tensor = (tensor * diagonal).sum(axis=second)
        letters = letters[:second] + letters[second + 1 :]
    return letters, tensor


def _needed(output, later):
    return set(output).union(*(set(letters) for letters, _ in later))


def _sum_unneeded(letters, tensor, keep, later):
    """Sum the axes whose letter neither the output (`keep`) nor a later operand uses."""
    needed = _needed(keep, later)
    axes = tuple(i for i, c in enumerate(letters) if c not in needed)
    if not axes:
        return letters, tensor
    return "".join(c for c in letters if c in needed), tensor.sum(axis=axes)


def _contract(a_letters, a, b_letters, b, needed):
    """a ⊗ b summed over the letters they share that nothing later needs: one batched matmul of
    a as (batch, a's own, summed) with b as (batch, summed, b's own)."""
    batch = [c for c in a_letters if c in b_letters and c in needed]
    summed = [c for c in a_letters if c in b_letters and c not in needed]
    a_own = [c for c in a_letters if c not in b_letters]
    b_own = [c for c in b_letters if c not in a_letters]
    size = dict(zip(a_letters, a.shape)) | dict(zip(b_letters, b.shape))
    product = _arranged(a, a_letters, [batch, a_own, summed], size) @ _arranged(b, b_letters, [batch, summed, b_own], size)
    letters = batch + a_own + b_own
    return "".join(letters), product.reshape([size[c] for c in letters])


def _arranged(tensor, letters, groups, size):
    """`tensor` (axes named by `letters`) with its axes in the order of `groups`, each group of
    letters merged into one axis (`size` gives the lengths; a group of one letter stays as it is)."""
    order = tuple(letters.index(c) for group in groups for c in group)
    tensor = tensor.transpose(order) if order != tuple(range(len(order))) else tensor
    if all(len(group) == 1 for group in groups):
        return tensor
    return tensor.reshape([int(np.prod([size[c] for c in group], dtype=np.int64)) for group in groups])
