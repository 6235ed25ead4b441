"""nbgrader preprocessors of the course: putting deleted test cells back, hiding hidden tests.

`RestoreCells` is nbgrader's OverwriteCells with a working `add_missing_cells`: nbgrader 0.9.6
looks up the cell before a deleted test cell among the submission's grade and answer cells only,
so deleting a test cell that follows a locked helper cell (or another deleted cell) crashes the
whole autograde with a KeyError, and the submission falls into "needs manual grading". Here the
cell goes back after the nearest preceding cell of the source notebook that the submission still
has, and is graded like any other.

`HideHiddenTests` prepares an autograded notebook for feedback: hidden test regions are replaced
by a note, and every line of an error traceback that shows a hidden test's code is blanked, so
a student who reads the feedback learns what failed, not how the instructor checks it.
"""

import re

from nbgrader.api import Gradebook
from nbgrader.preprocessors import ClearSolutions, NbGraderPreprocessor, OverwriteCells
from traitlets import Unicode

BEGIN_HIDDEN, END_HIDDEN = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class RestoreCells(OverwriteCells):
    """OverwriteCells, with deleted grade cells put back wherever their neighbours went."""

    def add_missing_grade_cells(self, nb, resources):
        source = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [cell.name for cell in source.source_cells]
        cells = {cell.name: cell for cell in source.source_cells}
        grades = {cell.name: cell for cell in source.grade_cells}
        solutions = {cell.name for cell in source.solution_cells}
        for position, name in enumerate(order):
            present = _positions(nb)
            if name not in grades or name in present:
                continue
            self.log.warning("Missing grade cell %s encountered, adding to notebook", name)
            cell = self.missing_cell_transform(cells[name], grades[name].max_score, is_solution=name in solutions)
            before = [present[n] for n in reversed(order[:position]) if n in present]
            nb.cells.insert(before[0] + 1 if before else 0, cell)
        return nb, resources


def _positions(nb):
    ids = ((i, c.get("metadata", {}).get("nbgrader", {}).get("grade_id")) for i, c in enumerate(nb.cells))
    return {grade_id: i for i, grade_id in ids if grade_id}


class HideHiddenTests(NbGraderPreprocessor):
    """Feedback without hidden tests: not in the cells, not in the tracebacks."""

    placeholder = Unicode("# (hidden tests: not shown)").tag(config=True)

    def preprocess(self, nb, resources):
        sources = [cell.source for cell in nb.cells if cell.cell_type == "code"]
        hidden = secret_lines(sources + self._gradebook_sources(resources))
        for cell in nb.cells:
            if cell.cell_type == "code" and BEGIN_HIDDEN in cell.source:
                cell.source = hidden_lines(cell.source)[1].replace(_MARK, self.placeholder)
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [scrub(entry, hidden) for entry in output.get("traceback", [])]
                    output["evalue"] = scrub(output.get("evalue", ""), hidden)
        return nb, resources

    @staticmethod
    def _gradebook_sources(resources):
        """The gradebook's source cells (a restored or edited cell's original too)."""
        info = resources.get("nbgrader", {})
        if not info.get("db_url"):
            return []
        with Gradebook(info["db_url"]) as gradebook:
            notebook = gradebook.find_notebook(info["notebook"], info["assignment"])
            return [cell.source or "" for cell in notebook.source_cells]


_MARK = "\x00hidden\x00"


def hidden_lines(source):
    """({hidden line, stripped}, the source with each hidden region replaced by one mark line)."""
    hidden, kept, inside = set(), [], False
    for line in source.splitlines():
        if BEGIN_HIDDEN in line:
            inside = True
            kept.append(_MARK)
        elif END_HIDDEN in line:
            inside = False
        elif inside:
            if line.strip():
                hidden.add(line.strip())
        else:
            kept.append(line)
    return hidden, "\n".join(kept)


_CODE_LINE = re.compile(r"^\s*(?:-*>)?\s*\d+\s(.*)$")  # IPython's "---> 17 code" and "     15 code"


def secret_lines(sources):
    """Lines of the hidden tests in `sources` that no visible part of them shows anyway."""
    hidden, visible = set(), set()
    for source in sources:
        lines, kept = hidden_lines(source)
        hidden |= lines
        visible |= {line.strip() for line in kept.splitlines()}
    return hidden - visible


def scrub(text, hidden):
    """`text` with every line that shows one of the `hidden` lines replaced by a note: a traceback's
    code line equal to a hidden line, or any line containing a long one."""
    if not hidden or not text:
        return text
    long_lines = [h for h in hidden if len(h) >= 12]
    out = []
    for line in text.split("\n"):
        plain = _ANSI.sub("", line)
        code = _CODE_LINE.match(plain)
        if (code and code.group(1).strip() in hidden) or any(h in plain for h in long_lines):
            out.append("      (a line of the hidden tests)")
        else:
            out.append(line)
    return "\n".join(out)


class NamedStubs(ClearSolutions):
    """ClearSolutions whose stub names the exercise: `NotImplementedError("not implemented yet:
    topological_sort")`, so an untouched exercise's failing tests say which one it is."""

    def preprocess_cell(self, cell, resources, index):
        cell, resources = super().preprocess_cell(cell, resources, index)
        name = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and name and _BARE_STUB in cell.source:
            cell.source = cell.source.replace(_BARE_STUB, f'raise NotImplementedError("not implemented yet: {name}")')
        return cell, resources


_BARE_STUB = "raise NotImplementedError()"
