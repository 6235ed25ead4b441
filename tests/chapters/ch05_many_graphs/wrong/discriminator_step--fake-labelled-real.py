def discriminator_step(generator, discriminator, optimizer, real, z):
    """Labels the generated samples 1 as well: the discriminator is taught that everything is real."""
    optimizer.zero_grad()
    with mg.no_grad():
        fake = generator(z)
    real_logits, fake_logits = discriminator(real), discriminator(fake)
    loss = binary_cross_entropy_with_logits(real_logits, Tensor(np.ones(real_logits.shape))) + \
        binary_cross_entropy_with_logits(fake_logits, Tensor(np.ones(fake_logits.shape)))
    loss.backward()
    optimizer.step()
    return loss.item()
