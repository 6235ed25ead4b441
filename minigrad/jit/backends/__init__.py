"""Backends turn a `Graph` into something that runs: `get_backend(name).compile(graph)`.

A backend is an object with a `name` and a method `compile(graph)` returning a function that takes
one numpy array per graph input and returns the list of output arrays (fresh arrays the caller may
keep). Backends are imported only when asked for, so numba (and a GPU driver) load only for code
that uses them.
"""

import importlib

BACKENDS = {
    "numpy": "minigrad.jit.backends.numpy_backend:NumpyBackend",
    "numba": "minigrad.jit.backends.numba_backend:NumbaBackend",
    "cuda": "minigrad.jit.backends.cuda_backend:CudaBackend",
}


class Backend:
    """The interface: `compile(graph)` -> callable(*arrays) -> list of arrays."""

    name = None

    def compile(self, graph):
        raise NotImplementedError(f"{type(self).__name__}.compile")


def get_backend(name, **options):
    """An instance of the backend registered as `name` (its module imported now, not before),
    made with `options` (e.g. fast_math=True)."""
    if isinstance(name, Backend):
        if options:
            raise TypeError(f"minigrad.jit: options {sorted(options)} given with a backend instance; set them on the instance")
        return name
    if name not in BACKENDS:
        raise ValueError(f"minigrad.jit: unknown backend {name!r}; the backends are {', '.join(BACKENDS)}")
    module_name, class_name = BACKENDS[name].split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise  # the backend exists but one of its dependencies is missing: say which
        raise NotImplementedError(
            f"minigrad.jit: the {name!r} backend is not available in this version of minigrad "
            f"({module_name.replace('.', '/')}.py does not exist yet); use backend='numpy'"
        ) from None
    return getattr(module, class_name)(**options)
