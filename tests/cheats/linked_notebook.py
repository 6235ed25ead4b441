# Submits a link to the instructor's solution notebook instead of a notebook, and a link to /etc/shadow.
# honest:
# beats nbgrader: no
# %% link: NOTEBOOK -> SOLUTION
# %% link: secrets.txt -> /etc/shadow
