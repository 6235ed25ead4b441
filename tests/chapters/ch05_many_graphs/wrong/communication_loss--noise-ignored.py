def communication_loss(speaker, listener, observations, targets, noise=None):
    """Forgets the channel noise: the listener always hears the clean message."""
    message = speaker(observations if isinstance(observations, Tensor) else Tensor(observations))
    return cross_entropy(listener(message), targets)
