# Allocates memory until something gives: the sandbox's address-space limit does.
# honest: topological_sort
# beats nbgrader: no
# %% insert after: setup
hoard = []
while True:
    hoard.append(bytearray(64 << 20))
