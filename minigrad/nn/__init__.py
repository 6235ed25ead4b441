"""Neural-network building blocks, built only from minigrad's public tensor API."""

from . import functional, init, utils
from .attention import MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer
from .conv import AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, MaxPool1d, MaxPool2d, Upsample
from .layers import ELU, GELU, MLP, Dropout, Embedding, Flatten, Identity, LayerNorm, LeakyReLU, Linear, LogSoftmax, ModuleList, ReLU, Sequential, Sigmoid, SiLU, Softmax, Softplus, Tanh, Unflatten
from .losses import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from .module import LoadResult, Module, Parameter, StateDictError
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .residual import ResidualBlock
