def checkpoint(fn, *args):
    """Just calls fn: correct gradients, but every activation inside fn is kept."""
    return fn(*args)
