"""Neural-network building blocks, built only from minigrad's public tensor API."""

from . import functional, init, utils
from .conv import AdaptiveAvgPool2d, AvgPool2d, Conv2d, MaxPool2d
from .layers import GELU, MLP, Dropout, Embedding, Flatten, Identity, LayerNorm, Linear, LogSoftmax, ModuleList, ReLU, Sequential, Sigmoid, Softmax, Tanh
from .losses import (
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    binary_cross_entropy_with_logits,
    cross_entropy,
    l1_loss,
    mse_loss,
    nll_loss,
)
from .module import LoadResult, Module, Parameter, StateDictError
from .recurrent import RNN, LSTMCell, RNNCell
from .residual import ResidualBlock
