"""A variational autoencoder (Kingma and Welling, 2014) learns a two-dimensional code for the 8x8
handwritten digits, with `torch.distributions` doing the probability.

    python examples/vae_digits.py              # 40 epochs, about a second: the ELBO climbs from -31 to -20 nats
    python examples/vae_digits.py --plot       # and draw the digits decoded from a grid of codes

The encoder maps an image x to the posterior q(z | x) = N(μ(x), diag σ(x)²) over a code z in R²,
an `Independent(Normal(mu, sigma), 1)`: one density per code, not one per coordinate. The decoder
maps a code to 64 pixel logits, the likelihood p(x | z) an `Independent(Bernoulli(logits=...), 1)`
of the binarized image. Training maximizes the evidence lower bound

    ELBO(x) = E_q[log p(x | z)] - KL(q(z | x) || N(0, I)) <= log p(x),

the expectation estimated with one draw z = μ + σ ε (`rsample`: the reparameterization trick, so
the gradient reaches μ and σ), the KL divergence in closed form (`kl_divergence`).

The program is written as a PyTorch user writes it; with `torch` imported in place of minigrad it
is a PyTorch program, and tests/test_examples.py runs it so: from the same weights the two
libraries compute the same posteriors, likelihoods, KL divergences and gradients, and each trains.
"""

import argparse

import numpy as np

import minigrad as mg
from minigrad import nn, optim
from minigrad.data import load_digits  # sklearn.datasets.load_digits in a PyTorch program
from minigrad.distributions import Bernoulli, Independent, Normal, kl_divergence


def data():
    """The 1,797 digits as float64 rows of 64 pixels, each 1 where its ink is above half its range."""
    images, _ = load_digits()
    return mg.tensor((images.reshape(len(images), 64) > 8).astype(np.float64))


class VAE(nn.Module):
    def __init__(self, pixels=64, hidden=128, latent=2):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(pixels, hidden), nn.ReLU())
        self.to_mean, self.to_log_scale = nn.Linear(hidden, latent), nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, pixels))

    def posterior(self, x):
        """q(z | x): a diagonal Gaussian over the code, its scale positive through exp."""
        h = self.encoder(x)
        return Independent(Normal(self.to_mean(h), self.to_log_scale(h).exp()), 1)

    def likelihood(self, z):
        """p(x | z): independent pixels, each on with probability sigmoid(logit)."""
        return Independent(Bernoulli(logits=self.decoder(z)), 1)

    def elbo(self, x):
        """The mean ELBO of the rows of x, in nats, from one reparameterized draw of each code."""
        q = self.posterior(x)
        z = q.rsample()
        prior = Independent(Normal(mg.zeros_like(z), mg.ones_like(z)), 1)
        return (self.likelihood(z).log_prob(x) - kl_divergence(q, prior)).mean()


def train(model, images, epochs, batch_size=64, lr=3e-3):
    """Adam on −ELBO over shuffled minibatches; the mean ELBO of each epoch."""
    optimizer = optim.Adam(model.parameters(), lr=lr)
    history = []
    for epoch in range(epochs):
        order, total = mg.randperm(len(images)), 0.0
        for start in range(0, len(images), batch_size):
            batch = images[order[start:start + batch_size]]
            optimizer.zero_grad()
            loss = -model.elbo(batch)
            loss.backward()
            optimizer.step()
            total += -loss.item() * len(batch)
        history.append(total / len(images))
        print(f"epoch {epoch:3d}  ELBO {history[-1]:8.3f} nats")
    return history


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--plot", action="store_true", help="draw the digits decoded from a 12 x 12 grid of codes")
    args = parser.parse_args(argv)
    mg.manual_seed(0)
    images = data()
    model = VAE().double()
    train(model, images, args.epochs)
    with mg.no_grad():
        codes = model.posterior(images).mean
    print(f"codes of the {len(images)} digits: mean {codes.mean(0).tolist()}, std {codes.std(0).tolist()} (the prior's: 0 and 1)")
    if args.plot:
        import matplotlib.pyplot as plt

        grid = mg.linspace(-2.5, 2.5, 12, dtype=mg.float64)
        z = mg.stack([mg.stack([a, b]) for b in grid.flip(0) for a in grid])
        with mg.no_grad():
            pixels = model.decoder(z).sigmoid().numpy().reshape(12, 12, 8, 8)
        plt.imshow(pixels.transpose(0, 2, 1, 3).reshape(96, 96), cmap="gray_r")
        plt.axis("off")
        plt.show()


if __name__ == "__main__":
    main()
