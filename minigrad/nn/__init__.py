"""Neural-network building blocks, built only from minigrad's public tensor API."""

from . import init, utils
from .layers import MLP, Identity, Linear, ReLU, Sequential, Sigmoid, Tanh
from .losses import binary_cross_entropy_with_logits, cross_entropy, mse_loss
from .module import LoadResult, Module, Parameter, StateDictError
from .recurrent import RNN, RNNCell
from .residual import ResidualBlock
