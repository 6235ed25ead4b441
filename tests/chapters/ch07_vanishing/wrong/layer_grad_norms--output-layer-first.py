def layer_grad_norms(model, x, y):
    """The norms in backward order, output layer first."""
    weights = [module.weight for module in model.modules() if isinstance(module, nn.Linear)]
    loss = nn.mse_loss(model(x), y)
    return np.array([np.linalg.norm(g.data) for g in mg.gradients(loss, weights)])[::-1]
