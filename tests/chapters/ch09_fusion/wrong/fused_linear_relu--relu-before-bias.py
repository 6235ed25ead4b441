@njit(error_model="numpy")
def fused_linear_relu(x, W, b):
    """Applies the ReLU to x @ W and adds the bias afterwards."""
    n, k = x.shape
    m = W.shape[1]
    out = np.empty((n, m), dtype=x.dtype)
    for i in range(n):
        for j in range(m):
            out[i, j] = 0
        for p in range(k):
            xv = x[i, p]
            for j in range(m):
                out[i, j] += xv * W[p, j]
        for j in range(m):
            if out[i, j] < 0:
                out[i, j] = 0
            out[i, j] += b[j]
    return out
