"""A deeper character-level MLP with batch normalisation written by hand: Andrej Karpathy's
"Building makemore Part 3: Activations & Gradients, BatchNorm", ported to minigrad.

    python examples/makemore_batchnorm.py              # 1,000 steps, a few seconds; statistics and samples
    python examples/makemore_batchnorm.py --steps 200 --plot statistics.png

His code with `torch` replaced by `mg`: the layers as plain classes (`Linear`, a `BatchNorm1d`
with running statistics updated under `no_grad`, `Tanh`), a `Generator` seeded for
reproducibility, five hidden layers, the manual update `p.data += -lr * p.grad`, and his
diagnostics: `layer.out.retain_grad()`, the saturation of each tanh, the gradient-to-data and
update-to-data ratios, histograms (`mg.histogram`). One edit: the update-to-data ratio reads
`p.std()` where he wrote `p.data.std()`, because minigrad's `.data` is the numpy array, whose
`std()` is the population standard deviation (PyTorch's divides by n − 1).

The words are the course's text (180 distinct words, his data set has 32,000 names), so the
model soon knows them by heart; the point is the statistics. tests/test_examples.py runs this file
with `torch` imported in place of minigrad, from the same weights on the same batches, and
compares every step's loss, every layer's activations and gradients, and the running statistics.
"""

import argparse
import random
import re

import minigrad as mg
from minigrad.nn import functional as F

block_size = 3  # context length: how many characters do we take to predict the next one?
n_embd = 10  # the dimensionality of the character embedding vectors
n_hidden = 100  # the number of neurons in the hidden layer of the MLP
batch_size = 32
g = mg.Generator().manual_seed(2147483647)  # for reproducibility


def data():
    """(Xtr, Ytr, Xdev, Ydev, Xte, Yte, itos): his 80/10/10 split of the words, as contexts of
    `block_size` characters and the next character ('.' ends a word and pads the start)."""
    words = sorted(set(re.findall("[a-z]+", mg.data.load_text().lower())))
    chars = sorted(list(set("".join(words))))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    itos = {i: s for s, i in stoi.items()}

    def build_dataset(words):
        X, Y = [], []
        for w in words:
            context = [0] * block_size
            for ch in w + ".":
                ix = stoi[ch]
                X.append(context)
                Y.append(ix)
                context = context[1:] + [ix]  # crop and append
        return mg.tensor(X), mg.tensor(Y)

    random.seed(42)
    random.shuffle(words)
    n1, n2 = int(0.8 * len(words)), int(0.9 * len(words))
    return (*build_dataset(words[:n1]), *build_dataset(words[n1:n2]), *build_dataset(words[n2:]), itos)


class Linear:
    def __init__(self, fan_in, fan_out, bias=True):
        self.weight = mg.randn((fan_in, fan_out), generator=g) / fan_in**0.5
        self.bias = mg.zeros(fan_out) if bias else None

    def __call__(self, x):
        self.out = x @ self.weight
        if self.bias is not None:
            self.out += self.bias
        return self.out

    def parameters(self):
        return [self.weight] + ([] if self.bias is None else [self.bias])


class BatchNorm1d:
    def __init__(self, dim, eps=1e-5, momentum=0.1):
        self.eps = eps
        self.momentum = momentum
        self.training = True
        # parameters (trained with backprop)
        self.gamma = mg.ones(dim)
        self.beta = mg.zeros(dim)
        # buffers (trained with a running 'momentum update')
        self.running_mean = mg.zeros(dim)
        self.running_var = mg.ones(dim)

    def __call__(self, x):
        # calculate the forward pass
        if self.training:
            xmean = x.mean(0, keepdim=True)  # batch mean
            xvar = x.var(0, keepdim=True)  # batch variance
        else:
            xmean = self.running_mean
            xvar = self.running_var
        xhat = (x - xmean) / mg.sqrt(xvar + self.eps)  # normalize to unit variance
        self.out = self.gamma * xhat + self.beta
        # update the buffers
        if self.training:
            with mg.no_grad():
                self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
        return self.out

    def parameters(self):
        return [self.gamma, self.beta]


class Tanh:
    def __call__(self, x):
        self.out = mg.tanh(x)
        return self.out

    def parameters(self):
        return []


def make_model(vocab_size):
    """(C, layers, parameters): his embedding table and six Linear-BatchNorm(-Tanh) layers."""
    C = mg.randn((vocab_size, n_embd), generator=g)
    layers = [
        Linear(n_embd * block_size, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, vocab_size, bias=False), BatchNorm1d(vocab_size),
    ]  # fmt: skip
    with mg.no_grad():
        # last layer: make less confident
        layers[-1].gamma *= 0.1
        # all other layers: apply gain
        for layer in layers[:-1]:
            if isinstance(layer, Linear):
                layer.weight *= 5 / 3
    parameters = [C] + [p for layer in layers for p in layer.parameters()]
    for p in parameters:
        p.requires_grad = True
    return C, layers, parameters


def get_batch(Xtr, Ytr):
    """A minibatch construct: random rows of the training set."""
    ix = mg.randint(0, Xtr.shape[0], (batch_size,), generator=g)
    return Xtr[ix], Ytr[ix]  # batch X,Y


def forward(C, layers, X):
    emb = C[X]  # embed the characters into vectors
    x = emb.view(emb.shape[0], -1)  # concatenate the vectors
    for layer in layers:
        x = layer(x)
    return x


def train(C, layers, parameters, Xtr, Ytr, max_steps, log_every=0):
    """His loop: returns (lossi, ud), the log10 loss of each step and, per step, the log10
    update-to-data ratio of each parameter."""
    lossi, ud = [], []
    for i in range(max_steps):
        Xb, Yb = get_batch(Xtr, Ytr)
        # forward pass
        loss = F.cross_entropy(forward(C, layers, Xb), Yb)  # loss function
        # backward pass
        for layer in layers:
            layer.out.retain_grad()  # AFTER_DEBUG: would take out retain_graph
        for p in parameters:
            p.grad = None
        loss.backward()
        # update
        lr = 0.1 if i < 0.75 * max_steps else 0.01  # step learning rate decay
        for p in parameters:
            p.data += -lr * p.grad
        # track stats
        if log_every and i % log_every == 0:  # print every once in a while
            print(f"{i:7d}/{max_steps:7d}: {loss.item():.4f}")
        lossi.append(loss.log10().item())
        with mg.no_grad():
            ud.append([((lr * p.grad).std() / p.std()).log10().item() for p in parameters])
    return lossi, ud


def activation_statistics(layers, kind=Tanh, grad=False):
    """His diagnostic: for each `kind` layer, (index, mean, std, % saturated) of its output (or,
    with `grad`, of its output's gradient, the % left 0), and the histogram to plot."""
    rows = []
    for i, layer in enumerate(layers[:-1]):  # note: exclude the output layer
        if isinstance(layer, kind):
            t = layer.out.grad if grad else layer.out
            saturated = 0.0 if grad else ((t.abs() > 0.97).float().mean() * 100).item()
            hy, hx = mg.histogram(t, density=True)
            rows.append((i, t.mean().item(), t.std().item(), saturated, hx[:-1].detach(), hy.detach()))
    return rows


@mg.no_grad()  # this decorator disables gradient tracking
def split_loss(C, layers, x, y):
    """The loss on a whole split, the layers in evaluation mode."""
    for layer in layers:
        layer.training = False
    loss = F.cross_entropy(forward(C, layers, x), y)
    for layer in layers:
        layer.training = True
    return loss.item()


@mg.no_grad()
def sample(C, layers, itos, count=10):
    """Words drawn from the model, one character at a time."""
    g = mg.Generator().manual_seed(2147483647 + 10)
    for layer in layers:
        layer.training = False
    words = []
    for _ in range(count):
        out = []
        context = [0] * block_size  # initialize with all ...
        while True:
            logits = forward(C, layers, mg.tensor([context]))
            probs = F.softmax(logits, dim=1)
            ix = mg.multinomial(probs, num_samples=1, generator=g).item()
            context = context[1:] + [ix]
            out.append(ix)
            if ix == 0:
                break
        words.append("".join(itos[i] for i in out))
    for layer in layers:
        layer.training = True
    return words


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--plot", help="save the activation, gradient and update-ratio plots to this PNG file")
    args = parser.parse_args(argv)
    Xtr, Ytr, Xdev, Ydev, Xte, Yte, itos = data()
    C, layers, parameters = make_model(len(itos))
    print(sum(p.nelement() for p in parameters), "parameters")  # number of parameters in total
    lossi, ud = train(C, layers, parameters, Xtr, Ytr, args.steps, log_every=max(1, args.steps // 5))
    for i, mean, std, saturated, _, _ in activation_statistics(layers):
        print(f"layer {i} (Tanh): mean {mean:+.2f}, std {std:.2f}, saturated: {saturated:.2f}%")
    for i, mean, std, _, _, _ in activation_statistics(layers, grad=True):
        print(f"layer {i} (Tanh): grad mean {mean:+e}, grad std {std:e}")
    if args.plot:  # before evaluation replaces each layer's .out
        plot(layers, parameters, ud, args.plot)
    print(f"train {split_loss(C, layers, Xtr, Ytr):.4f}, val {split_loss(C, layers, Xdev, Ydev):.4f}")
    print(" ".join(sample(C, layers, itos)))


def plot(layers, parameters, ud, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(18, 4))
    for grad, ax, title in ((False, axes[0], "activation distribution"), (True, axes[1], "gradient distribution")):
        for i, _, _, _, hx, hy in activation_statistics(layers, grad=grad):
            ax.plot(hx, hy, label=f"layer {i}")
        ax.set_title(title)
        ax.legend()
    for i, p in enumerate(parameters):
        if p.ndim == 2:
            axes[2].plot([ud[j][i] for j in range(len(ud))], label=f"param {i}")
    axes[2].plot([0, len(ud)], [-3, -3], "k")  # these ratios should be ~1e-3, indicate on plot
    axes[2].set_title("log10 update:data ratio")
    axes[2].legend()
    fig.savefig(path, dpi=80, bbox_inches="tight")
    print("saved", path)


if __name__ == "__main__":
    main()
