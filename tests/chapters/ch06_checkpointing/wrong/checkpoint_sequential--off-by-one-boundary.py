def checkpoint_sequential(layers, segments, x):
    """Each checkpoint starts one layer late: the first layer of a segment runs outside it."""
    layers = list(layers)
    if not 1 <= segments <= len(layers):
        raise ValueError(f"checkpoint_sequential: segments must be between 1 and {len(layers)}, got {segments}")
    sizes = [len(part) for part in np.array_split(np.arange(len(layers)), segments)]
    bounds = np.cumsum([0] + sizes)
    for start, stop in zip(bounds[:-2], bounds[1:-1]):
        x = layers[start](x)
        x = checkpoint(nn.Sequential(*layers[start + 1:stop]), x) if stop > start + 1 else x
    return nn.Sequential(*layers[bounds[-2]:])(x)
