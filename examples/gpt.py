"""A character-level GPT: Andrej Karpathy's `gpt.py` from "Let's build GPT: from scratch, in code,
spelled out", ported to minigrad.

    python examples/gpt.py                 # 200 steps on the course's text, about a minute; then a sample
    python examples/gpt.py --steps 50

The code is his with `torch` replaced by `mg` (`torch.nn` by `minigrad.nn`, `torch.nn.functional`
by `minigrad.nn.functional`), and the hyperparameters scaled down to what a CPU and numpy train
in minutes: his are 384 embedding dimensions, 6 heads, 6 layers, contexts of 256 characters. Each
piece is his: masked self-attention heads (`register_buffer('tril', ...)`, `masked_fill`, softmax,
`q @ k.transpose(-2, -1)`), multi-head attention in an `nn.ModuleList`, pre-norm residual blocks,
token and position embeddings, `AdamW`, `@mg.no_grad()` evaluation and sampling with
`mg.multinomial`. tests/test_examples.py runs this very file with `torch` imported in place of
minigrad, from the same weights on the same batches, and compares every step's loss.

The course's text is about 1,800 characters, his tiny Shakespeare a million: this model (0.2M
parameters) learns it by heart. The validation loss is lowest after about 100 steps (2.25 nats a
character) and rises from there while the training loss keeps falling (after 1,000 steps, with
dropout 0.1: 0.10 against 5.0), so the default stops at 200; train on a larger text to see it
generalise.
"""

import argparse

import minigrad as mg
import minigrad.nn as nn
from minigrad.nn import functional as F

# hyperparameters
batch_size = 32  # how many independent sequences will we process in parallel?
block_size = 64  # what is the maximum context length for predictions?
eval_interval = 50
learning_rate = 3e-3
eval_iters = 10
n_embd = 64
n_head = 4
n_layer = 4
dropout = 0.2
device = "cpu"


def data():
    """(train_data, val_data, vocab_size, encode, decode): the course's text as int64 character
    codes, split 90/10, and its alphabet's size."""
    text = mg.data.load_text()
    chars = sorted(list(set(text)))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    encode = lambda s: [stoi[c] for c in s]  # noqa: E731  (his encoder: take a string, output a list of integers)
    decode = lambda l: "".join([itos[i] for i in l])  # noqa: E731, E741
    encoded = mg.tensor(encode(text), dtype=mg.int64)
    n = int(0.9 * len(encoded))
    return encoded[:n], encoded[n:], len(chars), encode, decode


def get_batch(data):
    """A small batch of inputs x and targets y (x shifted by one character)."""
    ix = mg.randint(len(data) - block_size, (batch_size,))
    x = mg.stack([data[i : i + block_size] for i in ix])
    y = mg.stack([data[i + 1 : i + block_size + 1] for i in ix])
    return x.to(device), y.to(device)


class Head(nn.Module):
    """one head of self-attention"""

    def __init__(self, head_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("tril", mg.tril(mg.ones(block_size, block_size)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        # input of size (batch, time-step, channels), output of size (batch, time-step, head size)
        B, T, C = x.shape
        k = self.key(x)  # (B,T,hs)
        q = self.query(x)  # (B,T,hs)
        # compute attention scores ("affinities")
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5  # (B, T, hs) @ (B, hs, T) -> (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))  # (B, T, T)
        wei = F.softmax(wei, dim=-1)  # (B, T, T)
        wei = self.dropout(wei)
        # perform the weighted aggregation of the values
        v = self.value(x)  # (B,T,hs)
        return wei @ v  # (B, T, T) @ (B, T, hs) -> (B, T, hs)


class MultiHeadAttention(nn.Module):
    """multiple heads of self-attention in parallel"""

    def __init__(self, num_heads, head_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
        self.proj = nn.Linear(head_size * num_heads, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = mg.cat([h(x) for h in self.heads], dim=-1)
        return self.dropout(self.proj(out))


class FeedFoward(nn.Module):
    """a simple linear layer followed by a non-linearity"""

    def __init__(self, n_embd):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd), nn.Dropout(dropout))

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    """Transformer block: communication followed by computation"""

    def __init__(self, n_embd, n_head):
        # n_embd: embedding dimension, n_head: the number of heads we'd like
        super().__init__()
        head_size = n_embd // n_head
        self.sa = MultiHeadAttention(n_head, head_size)
        self.ffwd = FeedFoward(n_embd)
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        return x + self.ffwd(self.ln2(x))


class GPTLanguageModel(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        # each token directly reads off the logits for the next token from a lookup table
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.position_embedding_table = nn.Embedding(block_size, n_embd)
        self.blocks = nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)  # final layer norm
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        # idx and targets are both (B,T) tensor of integers
        tok_emb = self.token_embedding_table(idx)  # (B,T,C)
        pos_emb = self.position_embedding_table(mg.arange(T, device=device))  # (T,C)
        x = tok_emb + pos_emb  # (B,T,C)
        x = self.blocks(x)  # (B,T,C)
        x = self.ln_f(x)  # (B,T,C)
        logits = self.lm_head(x)  # (B,T,vocab_size)
        if targets is None:
            loss = None
        else:
            B, T, C = logits.shape
            logits = logits.view(B * T, C)
            targets = targets.view(B * T)
            loss = F.cross_entropy(logits, targets)
        return logits, loss

    def generate(self, idx, max_new_tokens):
        # idx is (B, T) array of indices in the current context
        for _ in range(max_new_tokens):
            idx_cond = idx[:, -block_size:]  # crop idx to the last block_size tokens
            logits, loss = self(idx_cond)
            logits = logits[:, -1, :]  # focus only on the last time step: (B, C)
            probs = F.softmax(logits, dim=-1)  # (B, C)
            idx_next = mg.multinomial(probs, num_samples=1)  # (B, 1)
            idx = mg.cat((idx, idx_next), dim=1)  # (B, T+1)
        return idx


@mg.no_grad()
def estimate_loss(model, splits):
    out = {}
    model.eval()
    for split, data in splits.items():
        losses = mg.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(data)
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def train(model, train_data, steps, val_data=None, log_every=0):
    """His training loop; returns every step's training loss."""
    optimizer = mg.optim.AdamW(model.parameters(), lr=learning_rate)
    history = []
    for iter in range(steps):
        if log_every and (iter % log_every == 0 or iter == steps - 1):
            losses = estimate_loss(model, {"train": train_data, "val": val_data if val_data is not None else train_data})
            print(f"step {iter}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        xb, yb = get_batch(train_data)  # sample a batch of data
        logits, loss = model(xb, yb)  # evaluate the loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        history.append(loss.item())
    return history


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--sample", type=int, default=300, help="characters to generate after training")
    args = parser.parse_args(argv)
    mg.manual_seed(1337)
    train_data, val_data, vocab_size, encode, decode = data()
    model = GPTLanguageModel(vocab_size=vocab_size)
    print(sum(p.numel() for p in model.parameters()) / 1e6, "M parameters")
    train(model, train_data, args.steps, val_data, log_every=max(1, min(eval_interval, args.steps // 4)))
    context = mg.zeros((1, 1), dtype=mg.int64, device=device)
    print(decode(model.generate(context, max_new_tokens=args.sample)[0].tolist()))


if __name__ == "__main__":
    main()
