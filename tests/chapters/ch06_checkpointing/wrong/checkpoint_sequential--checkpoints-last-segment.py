def checkpoint_sequential(layers, segments, x):
    """Checkpoints every segment, the last one too."""
    layers = list(layers)
    if not 1 <= segments <= len(layers):
        raise ValueError(f"checkpoint_sequential: segments must be between 1 and {len(layers)}, got {segments}")
    for part in np.array_split(np.arange(len(layers)), segments):
        x = checkpoint(nn.Sequential(*[layers[i] for i in part]), x)
    return x
