# An endless loop in a cell before the answers: it costs that cell's time limit, nothing more.
# honest: topological_sort
# beats nbgrader: no
# %% insert after: setup
while True:
    pass
