"""Load the course's nbgrader configuration (course/nbgrader_config.py) from the repository root.

nbgrader reads ``nbgrader_config.py`` from its working directory. ``tools/start.sh`` starts
JupyterLab here, so this file is how the Validate button (and any ``nbgrader`` command run from
the repository root) finds the course configuration.
"""

import os

load_subconfig(os.path.join(os.path.dirname(os.path.abspath(__file__)), "course", "nbgrader_config.py"))  # noqa: F821
