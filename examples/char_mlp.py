"""A character-level language model in the style of makemore (Bengio et al. 2003; Karpathy's
makemore): the last `block` characters, each looked up in an `Embedding`, predict the next one
through a tanh MLP. Trained with SGD and a cosine learning-rate schedule; samples text at the end.

    python examples/char_mlp.py              # 2,000 steps, about 15 seconds of CPU
    python examples/char_mlp.py --steps 200
"""

import argparse

import numpy as np

import minigrad as mg
from minigrad import nn, optim
from minigrad.data import load_text

BLOCK = 4


def data(block=BLOCK):
    """(contexts, targets, alphabet): every window of `block` character ids and the id after it."""
    text = load_text()
    alphabet = sorted(set(text))
    ids = np.array([alphabet.index(c) for c in text], dtype=np.int64)
    contexts = np.stack([ids[i : len(ids) - block + i] for i in range(block)], axis=1)
    return contexts, ids[block:], alphabet


class CharMLP(nn.Module):
    def __init__(self, vocab, block=BLOCK, embed=12, hidden=96, seed=0):
        rng = np.random.default_rng(seed)
        self.embedding = nn.Embedding(vocab, embed, rng=rng)
        self.flatten = nn.Flatten()
        self.hidden = nn.Linear(block * embed, hidden, rng=rng)
        self.out = nn.Linear(hidden, vocab, rng=rng)

    def forward(self, contexts):
        return self.out(self.hidden(self.flatten(self.embedding(contexts))).tanh())


def make_model(vocab, seed=0):
    return CharMLP(vocab, seed=seed)


def train(model, contexts, targets, steps, batch_size=128, lr=0.3, seed=0, log_every=0):
    optimizer = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    schedule = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(steps, 1), eta_min=lr / 100)
    rng = np.random.default_rng(seed)
    losses = []
    for step in range(steps):
        index = rng.integers(0, len(contexts), batch_size)
        loss = nn.cross_entropy(model(contexts[index]), targets[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if log_every and (step % log_every == 0 or step == steps - 1):
            print(f"step {step:4d}  loss {loss.item():.4f}  lr {optimizer.lr:.4f}")
    return losses


def sample(model, alphabet, start, length=200, seed=0):
    """Continue the text `start` (at least BLOCK characters) by sampling one character at a time."""
    rng = np.random.default_rng(seed)
    ids = [alphabet.index(c) for c in start]
    with mg.no_grad():
        for _ in range(length):
            probs = mg.softmax(model(np.array([ids[-BLOCK:]])), axis=1).data[0]
            ids.append(int(rng.choice(len(alphabet), p=probs / probs.sum())))
    return "".join(alphabet[i] for i in ids)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args(argv)
    contexts, targets, alphabet = data()
    model = make_model(len(alphabet))
    print(f"{len(contexts)} examples, {len(alphabet)} characters, {model.num_parameters()} parameters")
    train(model, contexts, targets, args.steps, log_every=max(1, args.steps // 10))
    print(sample(model, alphabet, "the "))


if __name__ == "__main__":
    main()
