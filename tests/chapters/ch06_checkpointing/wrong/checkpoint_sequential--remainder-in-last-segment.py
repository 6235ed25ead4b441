def checkpoint_sequential(layers, segments, x):
    """PyTorch-style n // segments layers per segment, the remainder going to the last one."""
    layers = list(layers)
    if not 1 <= segments <= len(layers):
        raise ValueError(f"checkpoint_sequential: segments must be between 1 and {len(layers)}, got {segments}")
    size = len(layers) // segments
    for start in range(0, size * (segments - 1), size):
        x = checkpoint(nn.Sequential(*layers[start:start + size]), x)
    return nn.Sequential(*layers[size * (segments - 1):])(x)
