"""Short text for values, as a reader wants them: in drawings' labels and in the jit's listings.

No drawing library here (the IR prints with it and must stay light): one module that both
`minigrad.render`'s drawings and `minigrad.jit.ir`'s `print(graph)` use.
"""

import numpy as np


def short(value, width=24):
    """A parameter as a user wrote it: slices as a:b, small arrays by value and others by shape,
    functions by name; cut to `width` characters with an ellipsis."""
    if isinstance(value, slice):
        text = ":".join("" if v is None else str(v) for v in (value.start, value.stop, value.step)).rstrip(":") or ":"
        text = text if ":" in text else text + ":"
    elif isinstance(value, tuple):
        text = "(" + ", ".join(short(v, width) for v in value) + ("," if len(value) == 1 else "") + ")"
    elif isinstance(value, np.ndarray):
        text = np.array2string(value, precision=4, separator=",") if value.size <= 4 else f"array{value.shape}"
        text = " ".join(text.split())
    elif callable(value) and hasattr(value, "__qualname__"):
        text = value.__qualname__
    else:
        text = str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def format_array(array):
    """Values rounded to 3 significant digits; a range and mean for more than 6 of them."""
    array = np.asarray(array)
    if array.size > 6:
        values = array.astype(np.float64)
        return f"[{values.min():.3g} … {values.max():.3g}], mean {values.mean():.3g}"
    if array.ndim == 0:
        return _format_number(array.item())
    text = np.array2string(array, separator=", ", formatter={"float_kind": _format_number})
    return " ".join(text.split())


def _format_number(value):
    return f"{value:.3g}" if isinstance(value, float) else str(value)
