"""A generative adversarial network's two updates (Goodfellow et al. 2014).

The generator G maps noise z to samples; the discriminator D maps a sample to a logit, the
log-odds that it is real. They are two graphs trained against each other:

* the discriminator step minimises  -log D(x) - log(1 - D(G(z))): G's output is a constant there
  (computed under `no_grad`), so no gradient and no backward work reaches the generator;
* the generator step minimises the non-saturating loss -log D(G(z)): the gradient must flow
  *through* D's graph to reach G, but D's weights are frozen (`requires_grad=False`) for the
  step, so they collect no `.grad` that would leak into the discriminator's next update.
"""

import numpy as np

from ..grad_mode import no_grad
from ..nn.losses import binary_cross_entropy_with_logits
from ..tensor import Tensor


def _labels(value, logits):
    return Tensor(np.full(logits.shape, value, dtype=logits.dtype))


def discriminator_step(generator, discriminator, optimizer, real, z):
    """One update of the discriminator; returns its loss as a float.

    Loss: the mean binary cross-entropy of D on `real` samples (label 1) plus that on the
    generated samples G(z) (label 0). The generator is only run forward: its parameters get
    no gradient. `optimizer` holds the discriminator's parameters.
    """
    optimizer.zero_grad()
    with no_grad():
        fake = generator(z)
    real_logits, fake_logits = discriminator(real), discriminator(fake)
    loss = binary_cross_entropy_with_logits(real_logits, _labels(1.0, real_logits)) + binary_cross_entropy_with_logits(
        fake_logits, _labels(0.0, fake_logits)
    )
    loss.backward()
    optimizer.step()
    return loss.item()


def generator_step(generator, discriminator, optimizer, z):
    """One update of the generator; returns its loss as a float.

    Loss: the mean binary cross-entropy of D(G(z)) against the label 1 ("real"), the
    non-saturating form of Goodfellow et al. The discriminator's parameters are frozen during the
    step (no `.grad`, no update) and trainable again afterwards. `optimizer` holds the generator's.
    """
    optimizer.zero_grad()
    discriminator.requires_grad_(False)
    try:
        logits = discriminator(generator(z))
        loss = binary_cross_entropy_with_logits(logits, _labels(1.0, logits))
        loss.backward()
    finally:
        discriminator.requires_grad_(True)
    optimizer.step()
    return loss.item()
