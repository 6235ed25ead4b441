"""The judge <-> sandbox stream: length-prefixed messages of plain data (`minigrad.plain`).

Nothing else crosses: no pickle, no handles, no objects. A message over the size limit, one that
does not decode, or a wait past its deadline ends the stream: the judge then kills the sandbox
rather than read on from a position it can no longer trust.
"""

import select
import socket
import struct
import time

from minigrad import plain

MAX_MESSAGE_BYTES = plain.MAX_BYTES
_LENGTH = struct.Struct("<Q")


class WireError(Exception):
    """The other side broke the protocol: a message too large, or not plain data."""


class PeerTimeout(Exception):
    """The other side did not answer before the deadline."""


class PeerClosed(Exception):
    """The other side's end of the socket closed (its process died)."""


def send(sock, message):
    """Send one plain value. Raises plain.NotPlainData (nothing sent) if it is not plain."""
    data = plain.encode(message)
    sock.sendall(_LENGTH.pack(len(data)) + data)


def recv(sock, deadline=None, limit=MAX_MESSAGE_BYTES):
    """One message; PeerTimeout past `deadline` (time.monotonic()), PeerClosed at end of stream."""
    (size,) = _LENGTH.unpack(_recv_exactly(sock, _LENGTH.size, deadline))
    if size > limit:
        raise WireError(f"a message of {size:,} bytes is over the limit of {limit:,}")
    try:
        return plain.decode(_recv_exactly(sock, size, deadline), limit)
    except plain.NotPlainData as error:
        raise WireError(str(error)) from None


def _recv_exactly(sock, size, deadline):
    chunks, remaining = [], size
    while remaining:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([sock], [], [], left)[0]:
                raise PeerTimeout()
        chunk = sock.recv(min(remaining, 1 << 20))
        if not chunk:
            raise PeerClosed()
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def socket_pair():
    """(judge end, sandbox end): a connected Unix socket pair; the sandbox end is inheritable."""
    judge_end, sandbox_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    sandbox_end.set_inheritable(True)
    return judge_end, sandbox_end
