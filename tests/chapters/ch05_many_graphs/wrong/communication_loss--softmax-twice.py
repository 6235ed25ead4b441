def communication_loss(speaker, listener, observations, targets, noise=None):
    """Feeds probabilities to cross_entropy, which applies its own (log-)softmax to logits."""
    message = speaker(observations if isinstance(observations, Tensor) else Tensor(observations))
    received = message if noise is None else message + Tensor(noise)
    return cross_entropy(mg.softmax(listener(received), axis=1), targets)
