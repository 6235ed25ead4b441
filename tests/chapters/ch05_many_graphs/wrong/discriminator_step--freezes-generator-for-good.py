def discriminator_step(generator, discriminator, optimizer, real, z):
    """One update of the discriminator; returns its loss as a float.

    real: Tensor (batch, dim) of data samples; z: Tensor (batch', noise_dim) of noise.
    Loss: mean BCE-with-logits of discriminator(real) against 1, plus that of
    discriminator(generator(z)) against 0. The generator is only run forward (no gradient and no
    graph for it); `optimizer` holds the discriminator's parameters.
    """
    optimizer.zero_grad()
    generator.requires_grad_(False)  # frozen instead of no_grad, and never unfrozen: the next generator step cannot learn
    fake = generator(z)
    real_logits, fake_logits = discriminator(real), discriminator(fake)
    loss = binary_cross_entropy_with_logits(real_logits, Tensor(np.ones(real_logits.shape))) + \
        binary_cross_entropy_with_logits(fake_logits, Tensor(np.zeros(fake_logits.shape)))
    loss.backward()
    optimizer.step()
    return loss.item()
