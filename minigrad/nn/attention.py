"""Attention layers, as PyTorch's: `MultiheadAttention` (projections, heads and
`scaled_dot_product_attention`'s arithmetic) and the Transformer's encoder, decoder and the two
together built on it, from minigrad's operations (so every derivative comes with them)."""

import copy

import numpy as np

from ..creation import zeros
from ..errors import ShapeError
from ..functional import cat
from ..tensor import Tensor, _is_cpu
from . import functional as F
from . import init
from .layers import Dropout, LayerNorm, Linear, ModuleList
from .module import Module, Parameter


class MultiheadAttention(Module):
    """Multi-head attention (Vaswani et al. 2017), as `torch.nn.MultiheadAttention`: queries,
    keys and values projected by `in_proj_weight` (3·E, E; PyTorch's layout and name, so state
    dicts carry over as they are; with `kdim` or `vdim` other than E, by `q_proj_weight`,
    `k_proj_weight` and `v_proj_weight` instead, as there), split into `num_heads` heads, attended
    by the arithmetic of `scaled_dot_product_attention` (one shared function, which returns the
    weights too), joined and projected by `out_proj`. `add_bias_kv` appends a learnt key and value
    (`bias_k`, `bias_v`) to every sequence, `add_zero_attn` a key and value of zeros after the
    heads are split: keys every query may attend to.

    Inputs are (L, N, E), or (N, L, E) with `batch_first=True`, or unbatched (L, E). `forward`
    returns `(output, weights)`: the attention weights averaged over the heads (N, L, S), or per
    head with `average_attn_weights=False`, or None with `need_weights=False`. Masks follow
    PyTorch: in `key_padding_mask` (N, S) and a bool `attn_mask` (L, S) or (N·heads, L, S), True
    marks what may *not* be attended to; float masks are added to the scores.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False, kdim=None, vdim=None, batch_first=False, rng=None, dtype=np.float64):
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim, self.vdim = embed_dim if kdim is None else kdim, embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == self.vdim == embed_dim  # PyTorch's name for the choice of weights
        if self._qkv_same_embed_dim:
            self.in_proj_weight = init.xavier_uniform_(Parameter(np.empty((3 * embed_dim, embed_dim))), rng=rng)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight, self.k_proj_weight, self.v_proj_weight = (
                init.xavier_uniform_(Parameter(np.empty((embed_dim, size))), rng=rng) for size in (embed_dim, self.kdim, self.vdim)
            )
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, rng=rng)
        if bias:
            self.out_proj.bias.data[...] = 0.0
        if add_bias_kv:
            self.bias_k, self.bias_v = (init.xavier_normal_(Parameter(np.empty((1, 1, embed_dim))), rng=rng) for _ in range(2))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn, self.rng = add_zero_attn, rng
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None, average_attn_weights=True, is_causal=False):
        if is_causal and attn_mask is None:
            raise ValueError("MultiheadAttention: is_causal=True is a hint that attn_mask is the causal mask; pass that mask too, as PyTorch requires")
        unbatched = query.ndim == 2
        q, k, v = (self._projected(x, i) for i, x in enumerate(self._sequence_first(query, key, value, unbatched)))  # (T, N, E)
        (L, N, E), H = q.shape, self.num_heads
        if self.bias_k is not None:
            k, v = cat([k, self.bias_k.expand(1, N, E)]), cat([v, self.bias_v.expand(1, N, E)])
        q, k, v = (x.reshape(x.shape[0], N, H, E // H).permute(1, 2, 0, 3) for x in (q, k, v))  # each (N, H, T, E / H)
        if self.add_zero_attn:
            k, v = (cat([x, zeros(N, H, 1, E // H, dtype=x.dtype)], dim=2) for x in (k, v))
        S, appended = k.shape[2], (self.bias_k is not None) + self.add_zero_attn
        masks = []  # PyTorch's convention here: True marks a key that may not be attended to
        if attn_mask is not None:
            mask = _with_allowed_keys(attn_mask, appended)
            masks.append((mask.reshape(N, H, L, S) if mask.ndim == 3 else mask, False, "attn_mask"))
        if key_padding_mask is not None:
            masks.append((_with_allowed_keys(key_padding_mask, appended).reshape(-1, 1, 1, S), False, "key_padding_mask"))
        dropout = self.dropout if self.training else 0.0
        attended, weights = F._attend(q, k, v, masks, "MultiheadAttention", dropout_p=dropout, rng=self.rng)
        out = self.out_proj(attended.permute(2, 0, 1, 3).reshape(L, N, E))  # heads joined: (L, N, E)
        out = out.squeeze(1) if unbatched else out.transpose(0, 1) if self.batch_first else out
        if not need_weights:
            return out, None
        weights = weights.mean(axis=1) if average_attn_weights else weights
        return out, (weights.squeeze(0) if unbatched else weights)

    def _sequence_first(self, query, key, value, unbatched):
        """The inputs as (T, N, features), whichever layout they came in; each checked."""
        inputs = []
        for name, x, size, what in (("query", query, self.embed_dim, "embed_dim"), ("key", key, self.kdim, "kdim"), ("value", value, self.vdim, "vdim")):
            if x.ndim != (2 if unbatched else 3) or x.shape[-1] != size:
                layout = "(N, L, E)" if self.batch_first else "(L, N, E)"
                raise ShapeError(
                    f"MultiheadAttention: {name} of shape {x.shape} does not fit: expected {layout} (or unbatched (L, E), "
                    f"like the query) whose last axis is {what} = {size}"
                )
            inputs.append(x.unsqueeze(1) if unbatched else x.transpose(0, 1) if self.batch_first else x)
        if inputs[1].shape[:2] != inputs[2].shape[:2] or inputs[0].shape[1] != inputs[1].shape[1]:
            raise ShapeError(f"MultiheadAttention: key and value must have the same length and batch as each other, and the query's batch; got shapes {query.shape}, {key.shape}, {value.shape}")
        return inputs

    def _projected(self, x, i):
        """The i-th input projection (query, key, value) of x (T, N, features): (T, N, E)."""
        E = self.embed_dim
        weight = self.in_proj_weight[i * E : (i + 1) * E] if self._qkv_same_embed_dim else (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)[i]
        x = x @ weight.T
        return x + self.in_proj_bias[i * E : (i + 1) * E] if self.in_proj_bias is not None else x


def _with_allowed_keys(mask, appended):
    """`mask` as a tensor, widened by `appended` keys every query may attend to (the bias and zero
    keys of `add_bias_kv` and `add_zero_attn`): False in a bool mask, 0 in a float one, as PyTorch pads."""
    array = mask.data if isinstance(mask, Tensor) else np.asarray(mask)
    if not appended:
        return mask if isinstance(mask, Tensor) else Tensor(array)
    if isinstance(mask, Tensor) and array.dtype != np.bool_:
        return F.pad(mask, (0, appended))  # a float mask may carry a gradient
    return Tensor(np.pad(array, [(0, 0)] * (array.ndim - 1) + [(0, appended)]))


class TransformerEncoderLayer(Module):
    """One block of a Transformer encoder (Vaswani et al. 2017), as PyTorch's: self-attention,
    then a two-layer feed-forward network, each inside a residual connection with layer
    normalisation, after it (the original) or, with `norm_first=True`, before it (pre-norm, as
    GPT-2). Sub-module names match PyTorch's (`self_attn`, `linear1`, `linear2`, `norm1`, `norm2`),
    so state dicts load either way."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, rng=None, dtype=np.float64):
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, rng=rng, dtype=dtype)
        _add_feed_forward(self, d_model, dim_feedforward, dropout, activation, bias, rng, dtype)
        self.norm_first = norm_first
        self.norm1, self.norm2 = (LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype) for _ in range(2))
        self.dropout1, self.dropout2 = (Dropout(dropout, rng=rng) for _ in range(2))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        blocks = [
            (self.norm1, lambda x: self.dropout1(_attention(self.self_attn, x, x, src_mask, src_key_padding_mask, is_causal))),
            (self.norm2, lambda x: self.dropout2(_feed_forward(self, x))),
        ]
        return _residual(src, blocks, self.norm_first)


class TransformerDecoderLayer(Module):
    """One block of a Transformer decoder, as PyTorch's: self-attention over the target, attention
    from the target to the encoder's output (`memory`), then the feed-forward network, each inside
    a residual connection with layer normalisation (after it, or before it with `norm_first=True`).
    Sub-module names match PyTorch's (`self_attn`, `multihead_attn`, `linear1`, `linear2`,
    `norm1`–`norm3`)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, rng=None, dtype=np.float64):
        self.self_attn, self.multihead_attn = (MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, rng=rng, dtype=dtype) for _ in range(2))
        _add_feed_forward(self, d_model, dim_feedforward, dropout, activation, bias, rng, dtype)
        self.norm_first = norm_first
        self.norm1, self.norm2, self.norm3 = (LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype) for _ in range(3))
        self.dropout1, self.dropout2, self.dropout3 = (Dropout(dropout, rng=rng) for _ in range(3))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        blocks = [
            (self.norm1, lambda x: self.dropout1(_attention(self.self_attn, x, x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))),
            (self.norm2, lambda x: self.dropout2(_attention(self.multihead_attn, x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))),
            (self.norm3, lambda x: self.dropout3(_feed_forward(self, x))),
        ]
        return _residual(tgt, blocks, self.norm_first)


def _add_feed_forward(layer, d_model, dim_feedforward, dropout, activation, bias, rng, dtype):
    """Give an encoder or decoder layer its feed-forward network: linear1, activation, dropout, linear2."""
    if isinstance(activation, str) and activation not in ("relu", "gelu"):
        raise ValueError(f"{type(layer).__name__}: activation must be 'relu', 'gelu' or a function, got {activation!r}")
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, rng=rng, dtype=dtype)
    layer.dropout = Dropout(dropout, rng=rng)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, rng=rng, dtype=dtype)
    layer.activation = {"relu": F.relu, "gelu": F.gelu}[activation] if isinstance(activation, str) else activation


def _feed_forward(layer, x):
    return layer.linear2(layer.dropout(layer.activation(layer.linear1(x))))


def _attention(attention, x, source, mask, padding, is_causal):
    """x attending to `source` (itself in self-attention); the output alone."""
    return attention(x, source, source, attn_mask=mask, key_padding_mask=padding, need_weights=False, is_causal=bool(is_causal))[0]


def _residual(x, blocks, norm_first):
    """x through each (norm, block) pair inside a residual connection: x + block(norm(x)) when
    `norm_first` (pre-norm), else norm(x + block(x)) (the original Transformer's post-norm)."""
    for norm, block in blocks:
        x = x + block(norm(x)) if norm_first else norm(x + block(x))
    return x


def _clones(layer, num_layers):
    """`num_layers` deep copies of `layer`, each with its own weights, as PyTorch makes them. The
    copies share the layer's random generators (dropout's): copied, each layer would draw the same
    masks as the others. PyTorch's layers share its one generator in the same way."""
    generators = {id(v): v for m in layer.modules() for v in vars(m).values() if isinstance(v, np.random.Generator)}
    return ModuleList([copy.deepcopy(layer, dict(generators)) for _ in range(num_layers)])


class TransformerEncoder(Module):
    """`num_layers` copies of `encoder_layer` applied in turn (each with its own weights, copied
    from the given layer as PyTorch does), then `norm` if given."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        self.layers, self.num_layers, self.norm = _clones(encoder_layer, num_layers), num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    """`num_layers` copies of `decoder_layer` applied in turn, each attending to the same `memory`
    (the encoder's output), then `norm` if given."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        self.layers, self.num_layers, self.norm = _clones(decoder_layer, num_layers), num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask, bool(tgt_is_causal), memory_is_causal)
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need", as `torch.nn.Transformer`: an
    encoder of `num_encoder_layers` layers and a decoder of `num_decoder_layers`, each ending in a
    LayerNorm (or `custom_encoder`, `custom_decoder`), every weight matrix then drawn anew by Xavier's
    uniform rule as PyTorch does. `forward(src, tgt, ...)` encodes the source and decodes the target
    against it; `Transformer.generate_square_subsequent_mask(n)` is the causal mask for the target."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, rng=None, dtype=np.float64):
        kw = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation, layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first, bias=bias, rng=rng, dtype=dtype)
        if custom_encoder is None:
            custom_encoder = TransformerEncoder(TransformerEncoderLayer(d_model, nhead, **kw), num_encoder_layers, LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype))
        if custom_decoder is None:
            custom_decoder = TransformerDecoder(TransformerDecoderLayer(d_model, nhead, **kw), num_decoder_layers, LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype))
        self.encoder, self.decoder = custom_encoder, custom_decoder
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p, rng=rng)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None, memory_is_causal=False):
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and tgt.ndim == 3 and src.shape[batch] != tgt.shape[batch]:
            raise ShapeError(f"Transformer: the batch number of src and tgt must be equal: src {src.shape}, tgt {tgt.shape} ({'(N, S, E)' if self.batch_first else '(S, N, E)'})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ShapeError(f"Transformer: the feature number of src and tgt must be equal to d_model = {self.d_model}: src {src.shape}, tgt {tgt.shape}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask, tgt_is_causal, memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The causal mask (sz, sz): 0 on and below the diagonal, -inf above it (position i may
        attend to positions up to i), in float64 unless `dtype` is given."""
        if device is not None and not _is_cpu(device, "generate_square_subsequent_mask"):
            raise TypeError(f"generate_square_subsequent_mask: device={device!r} is not a device")
        return Tensor(np.triu(np.full((sz, sz), -np.inf, dtype=np.float64 if dtype is None else dtype), 1))
