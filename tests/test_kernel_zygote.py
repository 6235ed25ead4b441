"""The judge kernels' zygote (course.kernel_zygote): forked kernels behave, for jupyter_client,
like the kernels it starts itself -- they run code, take interrupts, end with their relay -- and
the zygote forks for its token only."""

import asyncio
import json
import os
import signal
import socket
import time

import pytest
from traitlets.config import Config

from course.kernel_zygote import KernelZygote, ZygoteKernelManager


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    folder = tmp_path_factory.mktemp("zygote")
    zygote = KernelZygote(str(folder))
    yield zygote
    zygote.close()


def _manager(zygote, folder):
    config = Config()
    config.ZygoteKernelManager.zygote = zygote.address
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = str(folder / "kernel")
    return ZygoteKernelManager(config=config, kernel_name="python3")


def _with_kernel(zygote, folder, body):
    """Run `await body(km, kc)` on a fresh forked kernel; shut it down after."""

    async def run():
        km = _manager(zygote, folder)
        await km.start_kernel(cwd=str(folder))
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            return await body(km, kc)
        finally:
            kc.stop_channels()
            if await km.is_alive():
                await km.shutdown_kernel(now=True)

    return asyncio.run(run())


async def _value(kc, expression):
    reply = await kc.execute_interactive("", user_expressions={"v": expression}, timeout=60)
    return reply["content"]["user_expressions"]["v"]["data"]["text/plain"]


def _gone(pid, seconds=10):
    """The process has exited (a zombie nobody reaped yet counts as gone)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_a_kernel_is_forked_by_the_zygote_and_runs_code(zygote, tmp_path):
    async def body(km, kc):
        parent = int(await _value(kc, "__import__('os').getppid()"))
        pid = int(await _value(kc, "__import__('os').getpid()"))
        answer = await _value(kc, "sum(range(10))")
        return parent, pid, answer, km.provisioner.process.pid

    parent, pid, answer, relay = _with_kernel(zygote, tmp_path, body)
    assert parent == zygote.process.pid, "the kernel is not the zygote's child"
    assert pid != relay and answer == "45"


def test_the_kernel_starts_where_jupyter_client_asked_with_its_environment(zygote, tmp_path):
    async def body(km, kc):
        return (await _value(kc, "__import__('os').getcwd()"),
                await _value(kc, "__import__('os').environ.get('JPY_PARENT_PID')"),
                await _value(kc, "__import__('os').environ.get('MINIGRAD_KERNEL_ZYGOTE')"))

    cwd, parent, token = _with_kernel(zygote, tmp_path, body)
    assert cwd == repr(str(tmp_path))
    assert parent == repr(str(os.getpid())), "the kernel's environment is not the one jupyter_client made"
    assert token == "None", "the zygote's token reached the kernel"


def test_an_interrupt_reaches_the_kernel(zygote, tmp_path):
    async def body(km, kc):
        msg_id = kc.execute("import time; time.sleep(60)")
        await asyncio.sleep(1)
        started = time.monotonic()
        await km.interrupt_kernel()
        while True:
            reply = await kc.get_shell_msg(timeout=20)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"], time.monotonic() - started

    content, seconds = _with_kernel(zygote, tmp_path, body)
    assert content["status"] == "error" and content["ename"] == "KeyboardInterrupt", content
    assert seconds < 20


def test_killing_the_relay_kills_the_kernel(zygote, tmp_path):
    async def body(km, kc):
        pid = int(await _value(kc, "__import__('os').getpid()"))
        await km._async_kill_kernel()
        return pid

    assert _gone(_with_kernel(zygote, tmp_path, body)), "the kernel outlived its relay"


def test_shutdown_ends_the_relay_with_the_kernels_status(zygote, tmp_path):
    async def body(km, kc):
        relay = km.provisioner.process
        pid = int(await _value(kc, "__import__('os').getpid()"))
        await km.shutdown_kernel()
        return relay.wait(timeout=10), pid

    status, pid = _with_kernel(zygote, tmp_path, body)
    assert status == 0 and _gone(pid)


def _ask_without_token(path, folder):
    """The zygote's reply to a kernel request with a wrong token (it comes once the zygote serves)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client, open(os.devnull) as null:
        client.connect(path)
        request = {"token": "0" * 32, "argv": ["-f", str(folder / "kernel.json")], "cwd": str(folder), "env": {}}
        socket.send_fds(client, [json.dumps(request).encode() + b"\n"], [null.fileno()] * 3)
        return json.loads(client.makefile("rb").readline())


def test_a_request_without_the_token_forks_nothing(zygote, tmp_path):
    reply = _ask_without_token(zygote.address[0], tmp_path)
    assert "pid" not in reply and "bad token" in reply["error"]
    # and it still serves its own grader
    assert _with_kernel(zygote, tmp_path, lambda km, kc: _value(kc, "6 * 7")) == "42"


def test_the_zygote_goes_with_its_worker(tmp_path):
    """PR_SET_PDEATHSIG: a grading worker that dies leaves no zygote behind."""
    import subprocess
    import sys

    code = ("import sys, time; from course.kernel_zygote import KernelZygote; "
            f"z = KernelZygote({str(tmp_path)!r}); print(z.process.pid, z.path, flush=True); time.sleep(60)")
    worker = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    pid, path = worker.stdout.readline().split()
    assert "error" in _ask_without_token(path, tmp_path)  # it serves: past its set-up, PDEATHSIG included
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    assert _gone(int(pid)), "the zygote outlived its worker"


def test_kernels_go_with_their_zygote(tmp_path):
    """A zygote that dies (its worker closed it, or it crashed) takes its kernels with it."""
    own = KernelZygote(str(tmp_path))

    async def body(km, kc):
        pid = int(await _value(kc, "__import__('os').getpid()"))
        own.close()
        return pid

    try:
        assert _gone(_with_kernel(own, tmp_path, body)), "a kernel outlived its zygote"
    finally:
        own.close()


STUDENT_CELLS = [
    "import os, sys, minigrad\nprint(minigrad.WHO, os.path.relpath(minigrad.__file__), os.environ.get('MPLBACKEND'))",
    "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
    "from tqdm.auto import tqdm\nprint(tqdm.__module__, sum(1 for _ in tqdm(range(3))))",
    "import numba\nprint(numba.config.CACHE_DIR == os.environ.get('NUMBA_CACHE_DIR', ''))",
]


def test_a_students_kernel_from_the_zygote_is_a_plain_kernel_with_its_folders_minigrad(tmp_path, capfd):
    """student_kernels (`minigrad-course mine`, the bundle's checks): the notebook's folder's own
    minigrad (a bundle's copy, never the zygote's: it preloads none), inline figures, tqdm's widget,
    numba's settings from the kernel's environment; cell by cell what a plain kernel shows, and
    nothing printed to the terminal."""
    import nbformat

    from course.bundle import run_notebook
    from course.kernel_zygote import student_kernels

    (tmp_path / "minigrad").mkdir()
    (tmp_path / "minigrad" / "__init__.py").write_text("WHO = 'the folder copy'\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in STUDENT_CELLS])

    def shown(executed):
        return [[(o.output_type, o.get("text") or sorted(o.get("data", {}))) for o in cell.outputs] for cell in executed.cells]

    plain = shown(run_notebook(nb, tmp_path))
    capfd.readouterr()
    with student_kernels(["numba"]) as zygote:
        assert zygote is not None, "student_kernels should fork kernels on Linux"
        forked = [shown(run_notebook(nb, tmp_path, zygote=zygote)) for _ in range(2)]
    assert plain[0] == [("stream", "the folder copy minigrad/__init__.py module://matplotlib_inline.backend_inline\n")]
    assert plain[1] == [("display_data", ["image/png", "text/plain"])], plain[1]
    assert forked == [plain, plain]
    assert capfd.readouterr().out == ""
