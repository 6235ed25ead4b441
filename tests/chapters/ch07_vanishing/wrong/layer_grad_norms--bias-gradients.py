def layer_grad_norms(model, x, y):
    """Measures the biases' gradients instead of the weights'."""
    biases = [module.bias for module in model.modules() if isinstance(module, nn.Linear)]
    loss = nn.mse_loss(model(x), y)
    return np.array([np.linalg.norm(g.data) for g in mg.gradients(loss, biases)])
