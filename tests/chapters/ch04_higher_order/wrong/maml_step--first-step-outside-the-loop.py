def maml_step(params, forward, tasks, optimizer, inner_lr, inner_steps=1, first_order=False):
    """Writes θ' = θ - α∇L_S(θ) first, then inner_steps - 1 more steps: with inner_steps=0 it still adapts once."""
    optimizer.zero_grad()
    meta_loss = 0.0
    for x_support, y_support, x_query, y_query in tasks:
        grads = mg.gradients(mse_loss(forward(params, x_support), y_support), params, retain_graph=True,
                             create_graph=not first_order)
        adapted = [p - inner_lr * g for p, g in zip(params, grads)]
        for _ in range(inner_steps - 1):
            inner_loss = mse_loss(forward(adapted, x_support), y_support)
            grads = mg.gradients(inner_loss, adapted, retain_graph=True, create_graph=not first_order)
            adapted = [p - inner_lr * g for p, g in zip(adapted, grads)]
        meta_loss = meta_loss + mse_loss(forward(adapted, x_query), y_query) / len(tasks)
    meta_loss.backward()
    optimizer.step()
    return meta_loss.item()
