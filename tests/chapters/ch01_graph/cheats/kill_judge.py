# Tries to kill the process that grades it: its parent, the judge.
# honest: topological_sort
# beats nbgrader: no
# %% insert after: setup
import os
import signal

try:
    os.kill(os.getppid(), signal.SIGKILL)
except OSError as error:
    print("could not kill the grader:", error)
