"""Memory: the bytes a graph keeps for backward (`minigrad.saved`) and gradient checkpointing (`minigrad.checkpointing`).

Two concerns, one module each; this one gathers their public names, which notebooks import from
`minigrad.memory`.
"""

from .checkpointing import RandomState, captured_leaves, checkpoint, checkpoint_sequential, leaf_copy, replaying
from .saved import buffer_of, saved_bytes, track_saved_bytes

__all__ = [
    "RandomState",
    "buffer_of",
    "captured_leaves",
    "checkpoint",
    "checkpoint_sequential",
    "leaf_copy",
    "replaying",
    "saved_bytes",
    "track_saved_bytes",
]
