# Displays one 48 MB string a hundred times and prints as much: a small message, a huge notebook.
# honest:
# beats nbgrader: no
# %% insert after: setup
from IPython.display import display

flood = "x" * (48 << 20)
for _ in range(100):
    display({"text/plain": flood}, raw=True)
    print(flood)
