"""Attention layers, as PyTorch's: `MultiheadAttention` (projections, heads and
`scaled_dot_product_attention`'s arithmetic) and the Transformer encoder built on it, from
minigrad's operations (so every derivative comes with them)."""

import copy

import numpy as np

from ..errors import ShapeError
from ..tensor import Tensor
from . import functional as F
from . import init
from .layers import Dropout, LayerNorm, Linear, ModuleList
from .module import Module, Parameter


class MultiheadAttention(Module):
    """Multi-head attention (Vaswani et al. 2017), as `torch.nn.MultiheadAttention`: queries,
    keys and values projected by `in_proj_weight` (3·E, E; PyTorch's layout and name, so state
    dicts carry over as they are), split into `num_heads` heads, attended by the arithmetic of
    `scaled_dot_product_attention` (one shared function, which returns the weights too), joined and
    projected by `out_proj`.

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
        masks = []  # PyTorch's convention here: True marks a key that may not be attended to
        if attn_mask is not None:
            mask = attn_mask if isinstance(attn_mask, Tensor) else Tensor(np.asarray(attn_mask))
            masks.append((mask.reshape(N, H, L, S) if mask.ndim == 3 else mask, False, "attn_mask"))
        if key_padding_mask is not None:
            padding = key_padding_mask if isinstance(key_padding_mask, Tensor) else Tensor(np.asarray(key_padding_mask))
            masks.append((padding.reshape(-1, 1, 1, S), False, "key_padding_mask"))
        dropout = self.dropout if self.training else 0.0
        attended, weights = F._attend(q, k, v, masks, "MultiheadAttention", dropout_p=dropout, rng=self.rng)
        out = self.out_proj(attended.permute(2, 0, 1, 3).reshape(L, N, E))  # heads joined: (L, N, E)
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


class TransformerEncoderLayer(Module):
    """One block of a Transformer encoder (Vaswani et al. 2017), as PyTorch's: self-attention,
    then a two-layer feed-forward network, each inside a residual connection with layer
    normalisation, after it (the original) or, with `norm_first=True`, before it (pre-norm, as
    GPT-2). Sub-module names match PyTorch's (`self_attn`, `linear1`, `linear2`, `norm1`, `norm2`),
    so state dicts load either way."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, rng=None, dtype=np.float64):
        if isinstance(activation, str) and activation not in ("relu", "gelu"):
            raise ValueError(f"TransformerEncoderLayer: activation must be 'relu', 'gelu' or a function, got {activation!r}")
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, rng=rng, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, rng=rng, dtype=dtype)
        self.dropout = Dropout(dropout, rng=rng)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, rng=rng, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.dropout1, self.dropout2 = Dropout(dropout, rng=rng), Dropout(dropout, rng=rng)
        self.activation = {"relu": F.relu, "gelu": F.gelu}[activation] if isinstance(activation, str) else activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._attention(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._feed_forward(self.norm2(x))
        x = self.norm1(x + self._attention(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._feed_forward(x))

    def _attention(self, x, mask, padding, is_causal):
        out, _ = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding, need_weights=False, is_causal=is_causal)
        return self.dropout1(out)

    def _feed_forward(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """`num_layers` copies of `encoder_layer` applied in turn (each with its own weights, copied
    from the given layer as PyTorch does), then `norm` if given."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        # The copies share the layer's random generators (dropout's): copied, each layer would draw
        # the same masks as the others. PyTorch's layers share its one generator in the same way.
        generators = {id(v): v for m in encoder_layer.modules() for v in vars(m).values() if isinstance(v, np.random.Generator)}
        self.layers = ModuleList([copy.deepcopy(encoder_layer, dict(generators)) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return self.norm(x) if self.norm is not None else x
