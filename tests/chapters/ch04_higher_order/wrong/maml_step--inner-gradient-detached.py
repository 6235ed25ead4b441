def maml_step(params, forward, tasks, optimizer, inner_lr, inner_steps=1, first_order=False):
    """Detaches the inner gradient always: first-order MAML even when second order was asked for."""
    optimizer.zero_grad()
    meta_loss = 0.0
    for x_support, y_support, x_query, y_query in tasks:
        adapted = list(params)
        for _ in range(inner_steps):
            inner_loss = mse_loss(forward(adapted, x_support), y_support)
            grads = mg.gradients(inner_loss, adapted, retain_graph=True, create_graph=True)
            adapted = [p - inner_lr * g.detach() for p, g in zip(adapted, grads)]
        meta_loss = meta_loss + mse_loss(forward(adapted, x_query), y_query) / len(tasks)
    meta_loss.backward()
    optimizer.step()
    return meta_loss.item()
