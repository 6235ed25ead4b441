def layer_grad_norms(model, x, y):
    """Sums of squares instead of norms."""
    weights = [module.weight for module in model.modules() if isinstance(module, nn.Linear)]
    loss = nn.mse_loss(model(x), y)
    return np.array([np.sum(g.data**2) for g in mg.gradients(loss, weights)])
