"""course.kernels: kernels started without jupyter_client's fixed waits still lose nothing.

The client is ready once the kernel has answered and IOPub has carried a message, without waiting
for IOPub to fall quiet: a first cell's output must still reach the notebook, every time, from a
plain ipykernel (TCP, as `minigrad-course mine` starts one) and from a judge kernel forked by the
zygote (Unix sockets; tests/test_kernel_zygote.py).
"""

import nbformat

from course.bundle import run_notebook


def test_the_first_cells_output_reaches_the_notebook_in_every_fresh_kernel(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('first', 6 * 7)"),
                                         nbformat.v4.new_code_cell("import os; os.getcwd()")])
    for attempt in range(4):
        executed = run_notebook(nb, tmp_path)
        first, second = executed.cells
        assert [o.get("text") for o in first.outputs] == ["first 42\n"], (attempt, first.outputs)
        assert second.outputs[0]["data"]["text/plain"] == repr(str(tmp_path)), (attempt, second.outputs)
