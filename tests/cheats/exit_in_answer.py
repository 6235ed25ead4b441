# Answers every exercise by ending its own process (os._exit): each answer cell kills the sandbox.
# honest:
# beats nbgrader: no
# %% replace: ANSWERS
import os

os._exit(0)
