"""`MultiheadAttention`, as PyTorch's: projections, heads and `scaled_dot_product_attention`'s
arithmetic, built from minigrad's operations (so every derivative comes with them)."""

import math

import numpy as np

from ..errors import ShapeError
from ..functional import softmax
from ..tensor import Tensor
from . import functional as F
from . import init
from .layers import Linear
from .module import Module, Parameter


class MultiheadAttention(Module):
    """Multi-head attention (Vaswani et al. 2017), as `torch.nn.MultiheadAttention`: queries,
    keys and values projected by `in_proj_weight` (3·E, E; PyTorch's layout and name, so state
    dicts carry over as they are), split into `num_heads` heads, attended with
    `scaled_dot_product_attention`, joined and projected by `out_proj`.

    Inputs are (L, N, E), or (N, L, E) with `batch_first=True`, or unbatched (L, E). `forward`
    returns `(output, weights)`: the attention weights averaged over the heads (N, L, S), or per
    head with `average_attn_weights=False`, or None with `need_weights=False`. Masks follow
    PyTorch: in `key_padding_mask` (N, S) and a bool `attn_mask` (L, S) or (N·heads, L, S), True
    marks what may *not* be attended to; float masks are added to the scores.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False, kdim=None, vdim=None, batch_first=False, rng=None, dtype=np.float64):
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
        if add_bias_kv or add_zero_attn or kdim not in (None, embed_dim) or vdim not in (None, embed_dim):
            raise ValueError("MultiheadAttention: add_bias_kv, add_zero_attn and key or value sizes other than embed_dim are not supported in minigrad")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.in_proj_weight = Parameter(np.empty((3 * embed_dim, embed_dim)))
        init.xavier_uniform_(self.in_proj_weight, rng=rng)
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, rng=rng)
        if bias:
            self.out_proj.bias.data[...] = 0.0
        self.rng = rng
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None, average_attn_weights=True, is_causal=False):
        if is_causal and attn_mask is None:
            raise ValueError("MultiheadAttention: is_causal=True is a hint that attn_mask is the causal mask; pass that mask too, as PyTorch requires")
        unbatched = query.ndim == 2
        q, k, v = self._sequence_first(query, key, value, unbatched)
        (L, N, E), S, H = q.shape, k.shape[0], self.num_heads
        q, k, v = (self._heads(x, i) for i, x in enumerate((q, k, v)))  # each (N, H, T, E / H)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(E // H))
        if attn_mask is not None:
            mask = attn_mask if isinstance(attn_mask, Tensor) else Tensor(np.asarray(attn_mask))
            scores = F._masked(scores, mask.reshape(N, H, L, S) if mask.ndim == 3 else mask, "MultiheadAttention attn_mask", allowed=False)
        if key_padding_mask is not None:
            padding = key_padding_mask if isinstance(key_padding_mask, Tensor) else Tensor(np.asarray(key_padding_mask))
            scores = F._masked(scores, padding.reshape(-1, 1, 1, S), "MultiheadAttention key_padding_mask", allowed=False)
        weights = softmax(scores, dim=-1)
        if self.training and self.dropout > 0.0:
            weights = F.dropout(weights, self.dropout, rng=self.rng)
        out = self.out_proj((weights @ v).permute(2, 0, 1, 3).reshape(L, N, E))  # heads joined: (L, N, E)
        out = out.squeeze(1) if unbatched else out.transpose(0, 1) if self.batch_first else out
        if not need_weights:
            return out, None
        weights = weights.mean(axis=1) if average_attn_weights else weights
        return out, (weights.squeeze(0) if unbatched else weights)

    def _sequence_first(self, query, key, value, unbatched):
        """The inputs as (T, N, E), whichever layout they came in; each checked."""
        inputs = []
        for name, x in (("query", query), ("key", key), ("value", value)):
            if x.ndim != (2 if unbatched else 3) or x.shape[-1] != self.embed_dim:
                layout = "(N, L, E)" if self.batch_first else "(L, N, E)"
                raise ShapeError(
                    f"MultiheadAttention: {name} of shape {x.shape} does not fit: expected {layout} (or unbatched (L, E), "
                    f"like the query) with E = embed_dim = {self.embed_dim}"
                )
            inputs.append(x.unsqueeze(1) if unbatched else x.transpose(0, 1) if self.batch_first else x)
        if inputs[1].shape[:2] != inputs[2].shape[:2] or inputs[0].shape[1] != inputs[1].shape[1]:
            raise ShapeError(f"MultiheadAttention: key and value must have the same length and batch as each other, and the query's batch; got shapes {query.shape}, {key.shape}, {value.shape}")
        return inputs

    def _heads(self, x, i):
        """The i-th projection (query, key, value) of x (T, N, E), split into heads: (N, H, T, E / H)."""
        E = self.embed_dim
        x = x @ self.in_proj_weight[i * E : (i + 1) * E].T
        if self.in_proj_bias is not None:
            x = x + self.in_proj_bias[i * E : (i + 1) * E]
        return x.reshape(x.shape[0], x.shape[1], self.num_heads, E // self.num_heads).permute(1, 2, 0, 3)
