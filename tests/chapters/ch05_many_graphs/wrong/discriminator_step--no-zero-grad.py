def discriminator_step(generator, discriminator, optimizer, real, z):
    """Forgets optimizer.zero_grad(): whatever gradient the discriminator held is added to this one."""
    with mg.no_grad():
        fake = generator(z)
    real_logits, fake_logits = discriminator(real), discriminator(fake)
    loss = binary_cross_entropy_with_logits(real_logits, Tensor(np.ones(real_logits.shape))) + \
        binary_cross_entropy_with_logits(fake_logits, Tensor(np.zeros(fake_logits.shape)))
    loss.backward()
    optimizer.step()
    return loss.item()
