def generator_step(generator, discriminator, optimizer, z):
    """Steps both networks with the generator's loss: the discriminator is pushed to call fakes real."""
    optimizer.zero_grad()
    discriminator.zero_grad()
    logits = discriminator(generator(z))
    loss = binary_cross_entropy_with_logits(logits, Tensor(np.ones(logits.shape)))
    loss.backward()
    optimizer.step()
    mg.optim.SGD(discriminator.parameters(), lr=optimizer.lr).step()
    discriminator.zero_grad()
    return loss.item()
