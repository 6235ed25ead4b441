def discriminator_step(generator, discriminator, optimizer, real, z):
    """Runs the generator inside the graph: the discriminator's loss backpropagates into the generator too."""
    optimizer.zero_grad()
    real_logits, fake_logits = discriminator(real), discriminator(generator(z))
    loss = binary_cross_entropy_with_logits(real_logits, Tensor(np.ones(real_logits.shape))) + \
        binary_cross_entropy_with_logits(fake_logits, Tensor(np.zeros(fake_logits.shape)))
    loss.backward()
    optimizer.step()
    return loss.item()
