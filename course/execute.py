"""`JudgedExecute`: nbgrader's Execute preprocessor, with student code kept out of the kernel.

nbgrader executes an autograded notebook in one kernel, the student's code and the tests
together. This subclass keeps nbgrader's kernel for trusted code only (see `course.judge`): per
cell it decides, from the *gradebook* (never from the submission's metadata, which a student can
edit), what runs where:

  role      cells                                   runs
  test      grade cells                             the gradebook's source, in the kernel
  shared    locked cells (setup, helpers)           the gradebook's source, in the kernel and sandbox
  answer    solution cells                          the submitted source, in the sandbox
  student   everything else                         the submitted source, in the sandbox

Locked cells the student deleted are put back (nbgrader's `add_missing_cells` only restores grade
cells). Every cell has a time limit (`cell_timeout`) and the notebook a total (`notebook_timeout`);
cells left when the budget is gone, or after the kernel died, get an error output, so they score
zero in nbgrader's usual way. What happened (restored cells, timeouts, restarts) is left in the
notebook's metadata under `minigrad_judge` for `course.autograde`'s attention table.
"""

import json
import os
import subprocess
import tempfile
import time
from dataclasses import asdict

from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode
from nbgrader.api import Gradebook
from nbgrader.preprocessors import Execute
from traitlets import Integer, List

from .judge import ATTENTION_KEY, JUDGE_NAME
from .sandbox import Limits

RESTORED_MARK = "# Restored by the grader: this locked cell was missing from the submission.\n"
NBGRADER_RESTORED_MARK = "was missing from the submission"


class JudgedExecute(Execute):
    cell_timeout = Integer(60, help="Seconds one cell of the student's may run (tests included)").tag(config=True)
    notebook_timeout = Integer(600, help="Seconds the whole notebook may run").tag(config=True)
    memory_mb = Integer(Limits.memory_mb, help="Address space of the student's process, in MiB").tag(config=True)
    processes = Integer(Limits.processes, help="Processes and threads the student's process may have").tag(config=True)
    zygote = List(help="(socket path, token) of a course.sandbox.Zygote that forks sandboxes").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._cells = _gradebook_cells(resources)
        self._report = {"restored": _restore_locked_cells(nb, self._cells), "missing_answers": [],
                        "restored_tests": [], "not_run": [], "not_run_because": None, "kernel": None}
        present = {_grade_id(c) for c in nb.cells}
        self._report["missing_answers"] = [n for n, c in self._cells.items() if c["role"] == "answer" and n not in present]
        self._report["restored_tests"] = [_grade_id(c) for c in nb.cells
                                          if _grade_id(c) in self._cells and NBGRADER_RESTORED_MARK in c.source
                                          and self._cells[_grade_id(c)]["role"] == "test"]
        self._submission = (resources or {}).get("metadata", {}).get("path") or os.getcwd()
        # The judge kernel starts in an empty folder: a module shipped with the submission (numpy.py,
        # minigrad/) must not shadow the real one in the trusted process.
        scratch = tempfile.TemporaryDirectory(prefix="minigrad-judge-")
        resources = dict(resources or {})
        resources["metadata"] = {**resources.get("metadata", {}), "path": scratch.name}
        self._deadline = time.monotonic() + self.notebook_timeout
        self._dead = None
        try:
            with scratch:
                nb, resources = self._run(nb, resources, km)
        finally:
            nb.metadata[ATTENTION_KEY] = self._report
        resources["metadata"]["path"] = self._submission
        return nb, resources

    def _run(self, nb, resources, km):
        # nbconvert's ExecutePreprocessor.preprocess, with the judge installed first and its report
        # collected before the kernel shuts down.
        from nbclient.client import NotebookClient

        NotebookClient.__init__(self, nb, km)
        # __init__ re-reads nbclient's own timeout from the configuration; the judge's per-cell
        # deadline must fire first, so nbclient's is only a backstop for the trusted code's own work.
        self.timeout = 2 * self.cell_timeout + 120
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        # The kernel's own chatter (jupyter_client interrupts it on shutdown) stays out of the
        # instructor's terminal; what matters ends up in the notebook and the judge's report.
        with self.setup_kernel(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
            info = self.wait_for_reply(self.kc.kernel_info())
            self.nb.metadata["language_info"] = info["content"]["language_info"]
            self._install_judge()
            try:
                for index, cell in enumerate(self.nb.cells):
                    self.preprocess_cell(cell, resources, index)
            finally:
                self._collect_report()
        self.set_widgets_metadata()
        return self.nb, self.resources

    # ------------------------------------------------------------------ the judge in the kernel
    def _install_judge(self):
        limits = asdict(Limits(memory_mb=self.memory_mb, processes=self.processes,
                               cpu_seconds=self.notebook_timeout + 60))
        options = dict(limits=limits, cell_timeout=self.cell_timeout,
                       notebook_seconds=max(1.0, self._deadline - time.monotonic()), files_from=self._submission,
                       zygote=list(self.zygote) or None)
        self._control(f"import course.judge as _j\n_j.Judge.install(get_ipython(), **{options!r})\ndel _j")

    def _control(self, code, expression=None):
        """Run `code` in the kernel outside any cell; returns `expression`'s value (a repr)."""
        expressions = {"value": expression} if expression else {}
        msg_id = self.kc.execute(code, silent=False, store_history=False, user_expressions=expressions,
                                 allow_stdin=False, stop_on_error=False)
        reply = self.wait_for_reply(msg_id)
        content = reply["content"]
        if content["status"] != "ok":
            raise RuntimeError(f"the grader's judge failed: {content.get('ename')}: {content.get('evalue')}\n"
                               + "\n".join(content.get("traceback", [])))
        if expression:
            value = content["user_expressions"]["value"]
            if value.get("status") != "ok":
                raise RuntimeError(f"the grader's judge failed: {value.get('ename')}: {value.get('evalue')}")
            return value["data"]["text/plain"]
        return None

    def _collect_report(self):
        if self._dead:
            self._report["kernel"] = self._dead
            return
        try:
            from .judge import literal

            self._report.update(json.loads(literal(self._control("", f"{JUDGE_NAME}.report()"))))
            self._control(f"{JUDGE_NAME}.close()")
        except Exception as error:  # noqa: BLE001 - the report is best effort; the grades stand
            self._report["kernel"] = f"could not collect the judge's report: {error}"

    # ------------------------------------------------------------------ cells
    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        if self._dead or time.monotonic() >= self._deadline:
            self._not_run(cell, self._dead or f"the notebook's time limit ({self.notebook_timeout} s) ran out")
            return cell, resources
        role, name, trusted = self._role(cell)
        if role == "shared":
            self._control(f"{JUDGE_NAME}.share({trusted!r})")
            code = trusted
        elif role == "test":
            code = trusted
        else:
            code = f"{JUDGE_NAME}.student({cell.source!r})"
        original = cell.source
        cell.source = code
        try:
            self.execute_cell(cell, index, store_history=True)
        except DeadKernelError as error:
            self._dead = f"the grading kernel died: {error}"
            self._not_run(cell, self._dead)
        finally:
            cell.source = original
        return cell, self.resources

    def _role(self, cell):
        grade_id = _grade_id(cell)
        known = self._cells.get(grade_id)
        if known is None:
            return "student", None, None
        return known["role"], grade_id, known["source"]

    def _not_run(self, cell, why):
        cell.outputs = [NotebookNode(output_type="error", ename="NotRun", evalue=why,
                                     traceback=[f"NotRun: {why}"])]
        cell.execution_count = None
        if _grade_id(cell):
            self._report["not_run"].append(_grade_id(cell))
            self._report["not_run_because"] = self._report["not_run_because"] or why


def _grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _gradebook_cells(resources):
    """{grade_id: {role, source, index}} from the gradebook: the trusted truth about the notebook."""
    info = resources["nbgrader"]
    with Gradebook(info["db_url"]) as gradebook:
        notebook = gradebook.find_notebook(info["notebook"], info["assignment"])
        grades = {c.name for c in notebook.grade_cells}
        solutions = {c.name for c in notebook.solution_cells}
        cells = {}
        for index, source in enumerate(notebook.source_cells):
            if source.cell_type != "code":
                continue
            if source.name in solutions:
                role = "answer"
            elif source.name in grades:
                role = "test"
            elif source.locked:
                role = "shared"
            else:
                continue
            cells[source.name] = {"role": role, "source": source.source, "index": index}
    return cells


def _restore_locked_cells(nb, cells):
    """Put back the locked, ungraded cells (setup, helpers) a submission lacks, after the cell
    that precedes them in the source notebook. Returns their names."""
    positions = {_grade_id(c): i for i, c in enumerate(nb.cells) if _grade_id(c)}
    restored = []
    for name, cell in sorted(cells.items(), key=lambda item: item[1]["index"]):
        if cell["role"] != "shared" or name in positions:
            continue
        earlier = [n for n, c in cells.items() if c["index"] < cell["index"] and n in positions]
        at = positions[max(earlier, key=lambda n: cells[n]["index"])] + 1 if earlier else 0
        restored_cell = NotebookNode(
            cell_type="code", execution_count=None, outputs=[], source=RESTORED_MARK + cell["source"],
            metadata=NotebookNode(deletable=False, editable=False, nbgrader=NotebookNode(
                grade=False, solution=False, locked=True, grade_id=name, schema_version=3)),
        )
        if any("id" in c for c in nb.cells):
            restored_cell["id"] = f"restored-{name}"[:64]
        nb.cells.insert(at, restored_cell)
        positions = {_grade_id(c): i for i, c in enumerate(nb.cells) if _grade_id(c)}
        restored.append(name)
    return restored
