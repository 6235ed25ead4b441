# Kills its own process before the answers (os._exit): the sandbox restarts, the rest is graded.
# honest: topological_sort
# beats nbgrader: no
# %% insert after: setup
import os

os._exit(1)
