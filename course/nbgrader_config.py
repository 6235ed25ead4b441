"""nbgrader configuration of the minigrad course.

Every path is derived from this file's own location, so the course works from any working
directory (``nbgrader`` run from the repository root or from ``course/``, JupyterLab's Validate
button through the repository-root ``nbgrader_config.py``) and in any copy of the repository (the
test suite grades a temporary copy, never this folder).

Layout, relative to the repository root (nbgrader's course root):
    solutions/<chapter>/                  source notebooks (prose, solutions, hidden tests)
    notebooks/<chapter>/                  student notebooks, made by ``tools/release.sh``
    course/submitted/<student>/<chapter>/ submissions to grade            (git-ignored)
    course/autograded/, course/feedback/  nbgrader's outputs              (git-ignored)
    course/gradebook.db                   the sqlite gradebook            (git-ignored)
"""

import os
import sys

course_dir = os.path.dirname(os.path.abspath(__file__))
repository = os.path.dirname(course_dir)

c = get_config()  # noqa: F821 (injected by traitlets' config loader)

c.CourseDirectory.course_id = "minigrad"
c.CourseDirectory.root = repository
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.CourseDirectory.submitted_directory = os.path.join("course", "submitted")
c.CourseDirectory.autograded_directory = os.path.join("course", "autograded")
c.CourseDirectory.feedback_directory = os.path.join("course", "feedback")
# sqlite cannot create the folder of its database, and its error then misleadingly suggests
# `nbgrader db upgrade`; course/ exists whenever this file does, so the gradebook lives here.
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(course_dir, "gradebook.db")
# Creating the gradebook runs the `alembic` script from PATH; `.venv/bin/nbgrader` run without the
# environment activated would otherwise fail and leave a half-made gradebook behind.
os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])

# Seconds a single cell may run (autograde and the Validate button). A solution's slowest cell
# (chapter 2's training loop) takes a few seconds; an endless loop costs this much and no more.
c.Execute.timeout = 60

# A student who deletes a test cell must not escape it: autograde puts the cell back from the
# gradebook (the cell then runs against the student's code like any other test).
c.OverwriteCells.add_missing_cells = True

# Released stubs name their exercise (NotImplementedError("not implemented yet: topological_sort")),
# so an untouched exercise's failing tests say which one it is (course/preprocessors.py).
from nbgrader.converters import GenerateAssignment  # noqa: E402

from course.preprocessors import NamedStubs  # noqa: E402

c.GenerateAssignment.preprocessors = [
    NamedStubs if p.__name__ == "ClearSolutions" else p
    for p in GenerateAssignment.class_traits()["preprocessors"].default()
]
