"""jupyter_client's kernel manager and client without their fixed waits.

Every notebook the course runs (a judge kernel per graded submission, a student's kernel in
`minigrad-course mine` and the bundle's checks) starts a kernel, waits until it is ready and shuts
it down. jupyter_client spends most of that waiting on timers rather than on the kernel: ZeroMQ
retries the client's first, refused connection only after 100 ms (the client connects before the
kernel has bound its sockets), the client waits for IOPub to stay quiet for 0.2 s after the kernel
has answered, and the manager looks every 100 ms whether the kernel has exited. For a judge kernel
forked from a preloaded parent (`course.kernel_zygote`) that was 0.4 of the 0.5 s it took to start
and stop one (benchmarks/README.md, "Autograde throughput").
"""

import os
import queue
import shutil
import tempfile
import time

import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import Type


class ReadyKernelClient(AsyncKernelClient):
    """jupyter_client's client, ready as soon as the kernel is."""

    def start_channels(self, *args, **kwargs):
        # It connects before the kernel has bound its sockets, and ZeroMQ retries a refused
        # connection only after RECONNECT_IVL, 100 ms by default: 10 ms here (this client's context).
        self.context.setsockopt(zmq.RECONNECT_IVL, 10)
        super().start_channels(*args, **kwargs)

    async def wait_for_ready(self, timeout=None):
        """Ready when the kernel answers kernel_info and IOPub carries a message (it is connected),
        as jupyter_client decides, asking again every 20 ms until IOPub does; jupyter_client's own
        wait then also waits for IOPub to stay quiet for 0.2 s, which nbclient does not need (it
        reads IOPub by parent message)."""
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
                if reply["msg_type"] == "kernel_info_reply":
                    await self.iopub_channel.get_msg(timeout=0.02)
                    self._handle_kernel_info_reply(reply)
                    return
            except queue.Empty:
                pass
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")


class ReadyKernelManager(AsyncKernelManager):
    """nbclient's kernel manager, with `ReadyKernelClient`s, a 10 ms look for the kernel's exit
    and, on Unix, the kernel's sockets in a folder of its own."""

    client_factory = Type(ReadyKernelClient, klass=AsyncKernelClient)
    _socket_folder = None

    def _transport_default(self):
        # jupyter_client picks a TCP port by binding port 0 and closing it before the kernel binds
        # it, so two processes starting kernels at once (the suite's workers, a class graded in
        # parallel) can be handed the same port and one kernel dies: "Address already in use".
        # Unix sockets named in a folder no other kernel uses cannot collide.
        return "ipc" if os.name == "posix" else "tcp"

    def _ip_default(self):
        if self.transport != "ipc":
            return super()._ip_default()
        # jupyter_client's default names the sockets after the connection file, in Jupyter's
        # runtime folder: too long a path for a Unix socket (~100 bytes) under a long home folder.
        self._socket_folder = tempfile.mkdtemp(prefix="minigrad-kernel-")
        return os.path.join(self._socket_folder, "kernel")

    async def _async_cleanup_resources(self, restart=False):
        await super()._async_cleanup_resources(restart)
        if self._socket_folder and not restart:
            shutil.rmtree(self._socket_folder, ignore_errors=True)

    async def _async_finish_shutdown(self, waittime=None, pollinterval=0.01, restart=False):
        """jupyter_client's, looking every 10 ms instead of every 100 ms whether the kernel has
        exited: a kernel exits within milliseconds of its shutdown request."""
        await super()._async_finish_shutdown(waittime, pollinterval, restart)
