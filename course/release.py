"""Regenerate the student notebooks: ``python -m course.release [chapter ...]`` (all when none).

Each chapter's solution notebook is first brought in line with its text twin
(``twins/<chapter>/<chapter>.py``, the file people edit: see course/twins.py): the notebook is
rewritten from a twin edited since, or the twin from a notebook edited since (in JupyterLab without
jupytext, or by a script). Then ``notebooks/<chapter>/`` is replaced by what
``nbgrader generate_assignment --no-db`` makes from ``solutions/<chapter>/``: solutions replaced by
stubs, hidden tests removed, outputs cleared. The output depends only on the source, so it can be
committed and checked by the test suite.
"""

import sys

from . import twins
from .pipeline import COURSE, PipelineError, generate_releases


def release(chapters, course=COURSE):
    """Sync `chapters`' twins and notebooks (when the course has twins), then release them into
    ``course.notebooks``; returns a line per file written."""
    paired = twins.configuration(course) is not None
    written = [path for chapter in chapters for path in twins.sync(twins.pair(course, chapter))] if paired else []
    targets = generate_releases(chapters, course.notebooks, course)
    return ([f"synced {path.relative_to(course.root)}" for path in written]
            + [f"released {target.relative_to(course.root)}/" for target in targets])


def main(argv=None):
    try:
        known = twins.chapters(COURSE)
        chapters = list(sys.argv[1:] if argv is None else argv) or known
        unknown = [c for c in chapters if c not in known]
        if unknown:
            sys.exit(f"release: no solution notebook or twin for {unknown} (expected solutions/<chapter>/<chapter>.ipynb "
                     f"or twins/<chapter>/<chapter>.py); chapters: {known}")
        if not chapters:
            sys.exit("release: no chapters under solutions/")
        for line in release(chapters):
            print(line)
    except PipelineError as error:
        sys.exit(f"release failed: {error}")


if __name__ == "__main__":
    main()
