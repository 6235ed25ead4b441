def communication_loss(speaker, listener, observations, targets, noise=None):
    """Detaches the message: the listener learns, the speaker never gets a gradient."""
    message = speaker(observations if isinstance(observations, Tensor) else Tensor(observations)).detach()
    received = message if noise is None else message + Tensor(noise)
    return cross_entropy(listener(received), targets)
