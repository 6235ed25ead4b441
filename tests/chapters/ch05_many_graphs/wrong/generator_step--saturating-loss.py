def generator_step(generator, discriminator, optimizer, z):
    """Minimises log(1 - D(G(z))), the saturating form, instead of -log D(G(z))."""
    optimizer.zero_grad()
    discriminator.requires_grad_(False)
    try:
        logits = discriminator(generator(z))
        loss = -binary_cross_entropy_with_logits(logits, Tensor(np.zeros(logits.shape)))
        loss.backward()
    finally:
        discriminator.requires_grad_(True)
    optimizer.step()
    return loss.item()
