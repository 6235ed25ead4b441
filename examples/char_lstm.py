"""A character-level LSTM trained with truncated backpropagation through time.

The text is cut into `batch` parallel streams; each step unrolls an `LSTMCell` over the next
`unroll` characters of every stream, backpropagates through those steps only, clips the gradient
and takes an Adam step. The state (h, c) is carried to the next chunk *detached*: the forward pass
remembers the whole past, the backward pass reaches back `unroll` steps (Williams & Peng 1990).

    python examples/char_lstm.py             # 300 steps, about 10 seconds of CPU
    python examples/char_lstm.py --steps 30
"""

import argparse

import numpy as np

import minigrad as mg
from minigrad import nn, optim
from minigrad.data import load_text


def data(batch=16):
    """(streams, alphabet): character ids as (batch, length) parallel streams of the text."""
    text = load_text()
    alphabet = sorted(set(text))
    ids = np.array([alphabet.index(c) for c in text], dtype=np.int64)
    length = len(ids) // batch
    return ids[: batch * length].reshape(batch, length), alphabet


class CharLSTM(nn.Module):
    def __init__(self, vocab, embed=16, hidden=64, seed=0):
        rng = np.random.default_rng(seed)
        self.embedding = nn.Embedding(vocab, embed, rng=rng)
        self.cell = nn.LSTMCell(embed, hidden, rng=rng)
        self.head = nn.Linear(hidden, vocab, rng=rng)

    def forward(self, ids, state=None):
        """Logits (time, batch, vocab) for ids (batch, time), and the last state."""
        x = self.embedding(ids)
        logits = []
        for t in range(ids.shape[1]):
            state = self.cell(x[:, t], state)
            logits.append(self.head(state[0]))
        return mg.stack(logits), state


def make_model(vocab, seed=0):
    return CharLSTM(vocab, seed=seed)


def chunks(streams, unroll):
    """(inputs, targets, restart) windows of `unroll` characters in order along the streams; at the
    end they wrap around to the start, with `restart` True (the state must start afresh)."""
    start, restart = 0, True
    while True:
        if start + unroll + 1 > streams.shape[1]:
            start, restart = 0, True
        yield streams[:, start : start + unroll], streams[:, start + 1 : start + unroll + 1], restart
        start, restart = start + unroll, False


def train(model, streams, steps, unroll=16, lr=1e-2, max_norm=1.0, log_every=0):
    optimizer = optim.Adam(model.parameters(), lr=lr)
    state, losses = None, []
    for step, (inputs, targets, restart) in zip(range(steps), chunks(streams, unroll)):
        if restart:
            state = None  # zeros at the start of the streams
        logits, state = model(inputs, state)
        vocab = logits.shape[-1]
        loss = nn.cross_entropy(logits.reshape(-1, vocab), targets.T.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        state = (state[0].detach(), state[1].detach())  # truncate: the next chunk does not backpropagate into this one
        losses.append(loss.item())
        if log_every and (step % log_every == 0 or step == steps - 1):
            print(f"step {step:4d}  loss {loss.item():.4f}")
    return losses


def sample(model, alphabet, start="the ", length=200, seed=0):
    rng = np.random.default_rng(seed)
    ids, state = [alphabet.index(c) for c in start], None
    with mg.no_grad():
        logits, state = model(np.array([ids]), state)
        for _ in range(length):
            probs = mg.softmax(logits[-1], axis=1).data[0]
            ids.append(int(rng.choice(len(alphabet), p=probs / probs.sum())))
            logits, state = model(np.array([[ids[-1]]]), state)
    return "".join(alphabet[i] for i in ids)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    streams, alphabet = data()
    model = make_model(len(alphabet))
    print(f"{streams.shape[0]} streams of {streams.shape[1]} characters, {model.num_parameters()} parameters")
    train(model, streams, args.steps, log_every=max(1, args.steps // 10))
    print(sample(model, alphabet))


if __name__ == "__main__":
    main()
