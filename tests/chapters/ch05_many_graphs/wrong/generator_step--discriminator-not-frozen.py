def generator_step(generator, discriminator, optimizer, z):
    """Never freezes the discriminator: the generator's gradient piles up in the discriminator's .grad."""
    optimizer.zero_grad()
    logits = discriminator(generator(z))
    loss = binary_cross_entropy_with_logits(logits, Tensor(np.ones(logits.shape)))
    loss.backward()
    optimizer.step()
    return loss.item()
