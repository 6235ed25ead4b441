"""The website (`bash tools/site.sh`): built strict, then two of its pages opened in a browser.

The build is the command's own (Sphinx with myst-nb, warnings as errors: a broken link, a docstring
autodoc cannot read or a chapter that fails to run fails it), with one difference, said here and
in site.sh's `--execute`: executing all nine chapters costs about nine CPU-minutes, which the
suite's budget cannot pay twice (tests/test_pipeline.py already runs every chapter through
nbgrader). So this build executes chapter 1 (a minute; its matplotlib figures and its drawn graphs
are real outputs of this build) and renders the other eight from their sources, without outputs,
through the same pages, toctree and links. Its jupyter-cache is fresh (a temporary folder): nothing
is reused from an earlier build.

The checks read the site as a reader would: every chapter page, titled as its notebook; chapter 1's
figures as images that exist; the README and the instructor's guide, linked; the API reference
with an entry for every public name of `minigrad`, `minigrad.nn` and `minigrad.optim`. Then headless
Chromium (as tests/test_browser.py drives it) opens chapter 1 at a figure and the API page at
`Tensor`, and saves screenshots to test-artifacts/.
"""

import functools
import http.server
import inspect
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest
from test_browser import ARTIFACTS, CHROMIUM, FLAGS, _require_chromium

import minigrad
from minigrad import bijectors, constraints, distributions, linalg, nn, optim, special

REPOSITORY = Path(__file__).resolve().parent.parent
EXECUTED = "ch01_graph"  # the chapter this build executes: the first, and one of the quickest
CHAPTERS = sorted(p.name for p in (REPOSITORY / "solutions").iterdir() if (p / f"{p.name}.ipynb").is_file())

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("site")]  # one worker builds the site once


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The built site's html folder, and the build's seconds."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    start = time.monotonic()
    build = subprocess.run(
        ["bash", str(REPOSITORY / "tools" / "site.sh"), "--no-install", "--out", str(out / "site"),
         "--cache", str(out / "cache"), "--execute", EXECUTED],
        env=env, capture_output=True, text=True, timeout=1800,
    )
    seconds = time.monotonic() - start
    assert build.returncode == 0, f"tools/site.sh failed ({build.returncode}):\n{build.stdout[-4000:]}\n{build.stderr[-8000:]}"
    print(f"site built in {seconds:.0f} s (chapter {EXECUTED} executed)")
    return out / "site" / "html"


def _text(html):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _title(chapter):
    notebook = nbformat.read(REPOSITORY / "solutions" / chapter / f"{chapter}.ipynb", as_version=4)
    first = next(c for c in notebook.cells if c.cell_type == "markdown")
    return re.match(r"#\s+(.+)", first.source).group(1).strip()


def test_every_chapter_is_a_page_titled_as_its_notebook(site):
    assert len(CHAPTERS) == 9, CHAPTERS
    index = (site / "index.html").read_text()
    for chapter in CHAPTERS:
        page = site / "solutions" / chapter / f"{chapter}.html"
        assert page.is_file(), f"no page for {chapter}"
        title = re.search(r"<h1>(.*?)<a class=\"headerlink\"", page.read_text(), re.S).group(1)
        assert _text(title).strip() == _title(chapter), f"{chapter}: the page's title is {_text(title)!r}"
        assert f"solutions/{chapter}/{chapter}.html" in index, f"the index does not link {chapter}"
        assert "BEGIN SOLUTION" not in page.read_text(), f"{chapter}'s page shows nbgrader's region markers"


def test_the_executed_chapter_shows_its_figures(site):
    page = (site / "solutions" / EXECUTED / f"{EXECUTED}.html").read_text()
    images = re.findall(r'<img [^>]*src="([^"]+)"', page)
    plots = [i for i in images if i.endswith(".png")]  # matplotlib's figures (the drawn graphs are SVG)
    graphs = [i for i in images if i.endswith(".svg")]
    assert plots and graphs, f"{EXECUTED}: images on the page: {images}"
    for image in images:
        data = (site / "solutions" / EXECUTED / image).resolve().read_bytes()
        assert data.startswith(b"\x89PNG") or b"<svg" in data[:2000], f"{image} is neither a PNG nor an SVG"
    others = (site / "solutions" / "ch02_backprop" / "ch02_backprop.html").read_text()
    assert "<img " not in others, "a chapter this build does not execute shows outputs: from where?"


def test_readme_and_the_instructors_guide(site):
    readme = (site / "README.html").read_text()
    assert "Two commands" in _text(readme)
    assert 'href="course/README.html"' in readme, "the README's link to the instructor's guide does not resolve"
    guide = _text((site / "course" / "README.html").read_text())
    assert "the instructor" in guide and "minigrad-course autograde" in guide


def _public(module):
    """Classes and functions of `module`'s namespace defined in it or its submodules (not imported
    helpers), those of its `__all__` where it has one (autodoc documents just those)."""
    names = getattr(module, "__all__", None) or [name for name in vars(module) if not name.startswith("_")]
    return sorted(name for name in names if (inspect.isclass(value := getattr(module, name)) or inspect.isfunction(value))
                  and (value.__module__ + ".").startswith(module.__name__ + "."))


@pytest.mark.parametrize("module, page", [(minigrad, "minigrad"), (nn, "nn"), (optim, "optim"), (linalg, "linalg"), (distributions, "linalg"),
                                          (bijectors, "linalg"), (constraints, "linalg"), (special, "linalg")])
def test_the_api_reference_has_every_public_name(site, module, page):
    html = (site / "api" / f"{page}.html").read_text()
    missing = [name for name in _public(module) if f'id="{module.__name__}.{name}"' not in html]
    assert not missing, f"api/{page}.html has no entry for {missing}"
    for name in _public(module):  # a docstring that opens with "Name(...)" would become the signature
        value = getattr(module, name)
        if inspect.isclass(value) and not issubclass(value, BaseException):  # exceptions: no Python signature
            title = re.search(rf'id="{module.__name__}.{name}">(.*?)</dt>', html, re.S).group(1)
            names = re.findall(r'<em class="sig-param">(?:<span class="o"><span class="pre">\*\*?</span></span>)?<span class="n"><span class="pre">(\w+)</span>', title)
            wanted = [p.name for p in inspect.signature(value).parameters.values()]
            assert names == wanted, f"api/{page}.html shows {module.__name__}.{name}({', '.join(names)}), not ({', '.join(wanted)})"
    if module is minigrad:
        entry = re.search(r'id="minigrad.grad".*?</dd>', html, re.S).group(0)
        assert "argnums" in _text(entry), "minigrad.grad's entry lacks its docstring"
        assert 'id="minigrad.Tensor.backward"' in html, "Tensor's methods are not documented"


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser(server):
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _screenshot(page, name):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"site-{name}.png"), full_page=False)


def test_a_chapter_with_a_figure_in_the_browser(browser, server):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/solutions/{EXECUTED}/{EXECUTED}.html")
    assert page.locator("h1").first.inner_text().strip().rstrip("#¶").strip() == _title(EXECUTED)
    figure = page.locator('img[src$=".png"]').first
    figure.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=figure.element_handle())
    width = figure.evaluate("img => img.naturalWidth")
    assert width > 200, f"the first figure is {width} pixels wide"
    _screenshot(page, f"{EXECUTED}-figure")
    page.close()


def test_an_api_page_in_the_browser(browser, server):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/api/minigrad.html#minigrad.Tensor")
    entry = page.locator('[id="minigrad.Tensor"]')
    entry.wait_for()
    assert entry.is_visible()
    assert "Tensor" in entry.inner_text()
    signature = page.locator('[id="minigrad.Tensor.backward"]')
    assert "retain_graph" in signature.inner_text(), signature.inner_text()
    _screenshot(page, "api-minigrad-Tensor")
    page.close()
