"""course.kernels: kernels started without jupyter_client's fixed waits still lose nothing.

The client is ready once the kernel has answered and IOPub has carried a message, without waiting
for IOPub to fall quiet: a first cell's output must still reach the notebook, every time, from a
plain ipykernel (as `minigrad-course mine` starts one where the kernel zygote cannot run) and from
a kernel forked by the zygote (tests/test_kernel_zygote.py). On Unix both talk over Unix sockets in
a folder of their own, so kernels started at once by several processes cannot be handed the same
TCP port.
"""

import asyncio
import os

import nbformat
import pytest

from course.bundle import run_notebook
from course.kernels import ReadyKernelManager


def test_the_first_cells_output_reaches_the_notebook_in_every_fresh_kernel(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('first', 6 * 7)"),
                                         nbformat.v4.new_code_cell("import os; os.getcwd()")])
    for attempt in range(4):
        executed = run_notebook(nb, tmp_path)
        first, second = executed.cells
        assert [o.get("text") for o in first.outputs] == ["first 42\n"], (attempt, first.outputs)
        assert second.outputs[0]["data"]["text/plain"] == repr(str(tmp_path)), (attempt, second.outputs)


@pytest.mark.skipif(os.name != "posix", reason="Unix sockets are for Unix")
def test_a_kernel_talks_over_unix_sockets_in_its_own_folder_and_removes_it():
    async def start_and_stop():
        managers = [ReadyKernelManager(kernel_name="python3") for _ in range(2)]
        for manager in managers:
            await manager.start_kernel()
        clients = [manager.client() for manager in managers]
        for client in clients:
            client.start_channels()
            await client.wait_for_ready(timeout=60)
        folders = [os.path.dirname(manager.ip) for manager in managers]
        try:
            for manager, folder in zip(managers, folders):
                assert manager.transport == "ipc"
                assert os.path.isdir(folder) and os.path.basename(folder).startswith("minigrad-kernel-")
                assert any(name.startswith("kernel-") for name in os.listdir(folder)), os.listdir(folder)
            assert folders[0] != folders[1]
        finally:
            for client in clients:
                client.stop_channels()
            for manager in managers:
                await manager.shutdown_kernel(now=True)
        return folders

    for folder in asyncio.run(start_and_stop()):
        assert not os.path.exists(folder)
