"""Regenerate the student notebooks: ``python -m course.release [chapter ...]`` (all when none).

``notebooks/<chapter>/`` is replaced by what ``nbgrader generate_assignment --no-db`` makes from
``solutions/<chapter>/``: solutions replaced by stubs, hidden tests removed, outputs cleared.
The output depends only on the source, so it can be committed and checked by the test suite.
"""

import sys

from .pipeline import COURSE, PipelineError, generate_releases


def main(argv=None):
    chapters = list(sys.argv[1:] if argv is None else argv) or COURSE.chapters()
    unknown = [c for c in chapters if not COURSE.source(c).exists()]
    if unknown:
        sys.exit(f"release: no source notebook for {unknown} (expected solutions/<chapter>/<chapter>.ipynb); "
                 f"chapters: {COURSE.chapters()}")
    if not chapters:
        sys.exit("release: no chapters under solutions/")
    try:
        for target in generate_releases(chapters, COURSE.notebooks):
            print(f"released {target.relative_to(COURSE.root)}/")
    except PipelineError as error:
        sys.exit(f"release failed: {error}")


if __name__ == "__main__":
    main()
