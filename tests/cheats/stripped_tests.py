# Strips the nbgrader metadata off every test cell and empties it.
# honest:
# beats nbgrader: no
# %% strip: TESTS
pass
