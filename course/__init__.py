"""The nbgrader course of minigrad: its configuration (nbgrader_config.py) and the grading pipeline."""
