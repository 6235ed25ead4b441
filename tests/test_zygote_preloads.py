"""A chapter's heavy modules (course.sandbox.HEAVY_MODULES) are preloaded by its two grading
zygotes, and by those of no other chapter; the sandboxes and judge kernels forked from them find
the module loaded and its settings read from their own environment, not the zygote's."""

import ast
import asyncio
import os
import time

import pytest
from traitlets.config import Config

from course import sandbox, wire
from course.kernel_zygote import KernelZygote, ZygoteKernelManager
from course.pipeline import COURSE

# Run in the forked process before anything else imports numba there.
PROBE = """
import sys
_numba_was_loaded = "numba" in sys.modules
import numba.core.config
def _probe():
    return [_numba_was_loaded, numba.core.config.CACHE_DIR]
"""


def test_only_the_chapters_that_import_numba_preload_it():
    heavy = {chapter: sandbox.heavy_imports(COURSE.source(chapter)) for chapter in COURSE.chapters()}
    assert heavy.pop("ch09_fusion") == ["numba"]
    assert heavy and all(names == [] for names in heavy.values()), heavy


def test_heavy_imports_reads_imports_in_any_form_and_skips_what_is_not_python(tmp_path):
    import nbformat

    path = tmp_path / "chapter.ipynb"
    for source, expected in [("import numba.cuda", ["numba"]), ("%matplotlib inline\nfrom numba import njit", ["numba"]),
                             ("def f():\n    import numba", ["numba"]), ("import numbat\nfrom . import numba", []),
                             ("this is not python", [])]:
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)]), str(path))
        assert sandbox.heavy_imports(path) == expected, source


def test_a_zygote_preloads_only_the_modules_it_may():
    with pytest.raises(ValueError, match="torch"):
        sandbox.Zygote("/nonexistent", ["numba", "torch"])
    with pytest.raises(ValueError, match="torch"):
        KernelZygote("/nonexistent", ["torch"])


def _in_sandbox(zygote):
    """[was numba loaded before the probe, numba's cache folder], and the sandbox's own folder."""
    judge_end, sandbox_end = wire.socket_pair()
    process = sandbox.launch(sandbox_end, sandbox.Limits(), zygote.address)
    sandbox_end.close()
    try:
        with judge_end:
            wire.send(judge_end, ("exec", PROBE))
            done, _, error = wire.recv(judge_end, time.monotonic() + 60)
            assert (done, error) == ("done", None)
            wire.send(judge_end, ("call", "_probe", (), 60))
            kind, value = wire.recv(judge_end, time.monotonic() + 60)
        assert kind == "return", value
        return value, process.workdir
    finally:
        sandbox.terminate(process)


@pytest.mark.parametrize("heavy", [[], ["numba"]], ids=["plain", "numba"])
def test_a_sandbox_forked_by_a_zygote_has_what_it_preloaded_set_up_for_itself(tmp_path, heavy):
    folder = tmp_path / "worker"
    folder.mkdir(mode=0o700)
    zygote = sandbox.Zygote(str(folder), heavy)
    try:
        (was_loaded, cache_dir), workdir = _in_sandbox(zygote)
    finally:
        zygote.close()
    assert was_loaded == bool(heavy)
    assert cache_dir == os.path.join(workdir, ".numba"), "numba's settings are the zygote's, not the sandbox's"


def test_a_judge_kernel_forked_by_a_zygote_has_numba_set_up_for_itself(tmp_path):
    zygote = KernelZygote(str(tmp_path), ["numba"])
    config = Config()
    config.ZygoteKernelManager.zygote = zygote.address
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = str(tmp_path / "kernel")
    own_cache = str(tmp_path / "kernel-numba-cache")

    async def run():
        km = ZygoteKernelManager(config=config, kernel_name="python3")
        await km.start_kernel(cwd=str(tmp_path), env={**os.environ, "NUMBA_CACHE_DIR": own_cache})
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            reply = await kc.execute_interactive(PROBE, user_expressions={"v": "_probe()"}, timeout=60)
            return reply["content"]["user_expressions"]["v"]["data"]["text/plain"]
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    try:
        assert ast.literal_eval(asyncio.run(run())) == [True, own_cache]
    finally:
        zygote.close()
