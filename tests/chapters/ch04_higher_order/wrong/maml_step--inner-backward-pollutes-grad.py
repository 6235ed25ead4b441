def maml_step(params, forward, tasks, optimizer, inner_lr, inner_steps=1, first_order=False):
    """Gets the inner gradient from backward(): it stays in .grad and is mixed into the meta-update."""
    optimizer.zero_grad()
    meta_loss = 0.0
    for x_support, y_support, x_query, y_query in tasks:
        adapted = list(params)
        for _ in range(inner_steps):
            for p in adapted:
                p.retain_grad()
            mse_loss(forward(adapted, x_support), y_support).backward(retain_graph=True, create_graph=not first_order)
            adapted = [p - inner_lr * p.grad for p in adapted]
        meta_loss = meta_loss + mse_loss(forward(adapted, x_query), y_query) / len(tasks)
    meta_loss.backward()
    optimizer.step()
    return meta_loss.item()
