"""Sphinx configuration of the course's website, built by tools/site.sh (read it first).

tools/site.sh lays the pages out in a staging folder that mirrors the repository (README.md,
course/README.md, solutions/<chapter>/<chapter>.ipynb, plus docs/index.md and docs/api/), so the
relative links between them work on the site as on GitHub, and runs sphinx-build with this folder
as its configuration directory. The chapters are executed at build time by myst-nb through
jupyter-cache: a rebuild re-executes only the chapters that changed. SITE_EXECUTE (site.sh
--execute) lists the chapters to execute; the others are rendered from their sources alone.
"""

import os
import sys

import minigrad

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))

project = "minigrad"
author = "the minigrad course"
copyright = "the minigrad course authors, MIT licence"
release = version = minigrad.__version__

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.mathjax", "sphinx.ext.viewcode", "markdown_docstrings", "html_anchors"]
root_doc = "index"
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
html_theme = "furo"
html_title = "minigrad"

# Markdown (README, guide, notebooks' prose): $...$ maths, ``` fences, heading anchors for the
# chapters' links to each other's sections (../ch01_graph/ch01_graph.ipynb#reference-library).
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 4

# Execution. "cache": jupyter-cache keeps each executed notebook keyed by its code cells, in
# SITE_CACHE (site.sh --cache), so a second build executes nothing unchanged.
nb_execution_mode = "cache"
nb_execution_cache_path = os.environ.get("SITE_CACHE", os.path.join(os.path.dirname(__file__), "..", "build", "site-cache", "jupyter-cache"))
nb_execution_timeout = 900  # seconds a cell may take: a wait on a loaded machine, not a speed limit
nb_execution_raise_on_error = True  # a chapter that fails to run fails the build
nb_execution_show_tb = True
_chapters = sorted(os.listdir(os.path.join(os.path.dirname(__file__), "..", "solutions")))
if os.environ.get("SITE_EXECUTE") is not None:  # only these chapters execute; the others render from source
    _chosen = {name for name in os.environ["SITE_EXECUTE"].split(",") if name}
    if _chosen - set(_chapters):
        raise ValueError(f"tools/site.sh --execute: no chapter {sorted(_chosen - set(_chapters))}; chapters: {_chapters}")
    nb_execution_excludepatterns = [f"solutions/{chapter}/*" for chapter in _chapters if chapter not in _chosen]

# API reference from the docstrings (Markdown, see _ext/markdown_docstrings.py): members in source
# order, undocumented ones included (their signatures still help), names without their module.
autodoc_default_options = {"members": True, "undoc-members": True, "member-order": "bysource"}
autodoc_typehints = "none"
add_module_names = False


def _skip_numpy_members(app, what, name, obj, skip, options):
    """numpy's dtypes, re-exported under PyTorch's names (`mg.float32`), are numpy's to document:
    their docstrings are numpy's reStructuredText, not minigrad's Markdown."""
    return True if getattr(obj, "__module__", None) == "numpy" else None


def setup(app):
    app.connect("autodoc-skip-member", _skip_numpy_members)
