"""Keep the solution notebooks and their text twins (twins/<chapter>/<chapter>.py) in agreement.

    python tools/twins.py sync [CHAPTER ...] [--from-twins | --from-notebooks]
    python tools/twins.py check [CHAPTER ...]

`sync` writes whichever of the two is older from the other (nothing when they agree; the flag
says which one wins instead); `check` exits 1 naming each chapter whose twin and notebook
disagree, and what they disagree on. All chapters when none is named. What the twin keeps and
what it cannot: course/twins.py. `bash tools/release.sh` syncs before it releases.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None):
    from course.pipeline import Course
    from course.twins import TwinError, chapters, check, pair, sync

    args = _parser().parse_args(argv)
    course = Course(args.course.resolve(), args.course.resolve() / "tests" / "chapters")
    try:
        names = args.chapters or chapters(course)
        if args.command == "sync":
            for chapter in names:
                written = sync(pair(course, chapter), args.source)
                print(f"{chapter}: " + (", ".join(f"wrote {p.relative_to(course.root)}" for p in written) or "in sync"))
            return 0
        problems = {chapter: check(pair(course, chapter)) for chapter in names}
    except TwinError as error:
        print(f"twins {args.command}: {error}", file=sys.stderr)
        return 1
    for chapter, reasons in problems.items():
        print(f"{chapter}: " + ("twin and notebook agree" if not reasons else "DISAGREE\n    " + "\n    ".join(reasons)))
    if any(problems.values()):
        print("edit the twin and run `python tools/twins.py sync` (or `bash tools/release.sh CHAPTER`)", file=sys.stderr)
        return 1
    return 0


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--course", type=Path, default=ROOT, help="the course folder (default: this repository)")
    commands = parser.add_subparsers(dest="command", required=True)
    sync = commands.add_parser("sync", help="write the older of notebook and twin from the other")
    sync.add_argument("chapters", nargs="*")
    direction = sync.add_mutually_exclusive_group()
    direction.add_argument("--from-twins", dest="source", action="store_const", const="twin")
    direction.add_argument("--from-notebooks", dest="source", action="store_const", const="notebook")
    check = commands.add_parser("check", help="exit 1 listing the chapters whose twin and notebook disagree")
    check.add_argument("chapters", nargs="*")
    return parser


if __name__ == "__main__":
    sys.exit(main())
