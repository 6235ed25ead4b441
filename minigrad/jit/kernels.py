"""Hand-written fused kernels: the reference answers the generated ones are compared with.

`fused_linear_relu(x, W, b)` is a dense layer, relu(x @ W + b), in one pass over the output: each
output row starts as the bias, accumulates x[i, p] * W[p, :] while it sits in the cache, and is
clipped at zero before the next row begins. No intermediate (x @ W, x @ W + b) ever exists as an
array, so the only memory traffic is reading x and W and writing the result once. This is the
epilogue fusion that cuBLAS and oneDNN offer as "matmul with bias and ReLU", and that
`minigrad.jit.fuse` finds in traced graphs ("linear_epilogue" kernels).

The loop order i, p, j keeps the innermost loop contiguous in W and in the output row, so it
vectorises; it does not block for the cache as BLAS does, so for large inner dimensions numpy's
`x @ W` (multi-threaded, blocked, hand-tuned) computes the product faster even though it then
writes and rereads the intermediate.
"""

import numpy as np
from numba import njit


@njit(error_model="numpy")  # no disk cache: this file may be read-only (a grader's sandbox); compiling takes ~0.3 s
def fused_linear_relu(x, W, b):
    """relu(x @ W + b) for x (n, k), W (k, m), b (m,), computed in one pass; allocates only the result."""
    n, k = x.shape
    if W.shape[0] != k or b.shape[0] != W.shape[1]:
        raise ValueError("fused_linear_relu: shapes do not align: need x (n, k), W (k, m), b (m,)")
    m = W.shape[1]
    out = np.empty((n, m), dtype=x.dtype)
    for i in range(n):
        for j in range(m):
            out[i, j] = b[j]  # the bias first: adding it costs nothing extra
        for p in range(k):
            xv = x[i, p]
            for j in range(m):
                out[i, j] += xv * W[p, j]
        for j in range(m):
            if out[i, j] < 0:  # NaN < 0 is False: NaN passes through, as with np.maximum
                out[i, j] = 0
    return out
