"""minigrad's docstrings are Markdown (`code` in single backquotes, |V| and f'' as plain text,
indented examples), not reStructuredText: autodoc hands each one to MyST instead of parsing it as
RST, which would read |V| as a substitution and `grad` as an ambiguous cross-reference."""

from docutils.utils import new_document
from myst_parser.mdit_to_docutils.sphinx_ import SphinxRenderer
from myst_parser.parsers.mdit import create_md_parser
from sphinx.util.docutils import SphinxDirective


class MarkdownDocstring(SphinxDirective):
    """The directive's content, parsed as MyST Markdown, in place."""

    has_content = True

    def run(self):
        source, _ = self.get_source_info()
        document = new_document(source, self.state.document.settings)
        parser = create_md_parser(self.env.myst_config, SphinxRenderer)
        parser.options["document"] = document
        parser.render("\n".join(self.content))
        return document.children


def _as_markdown(app, what, name, obj, options, lines):
    if any(line.strip() for line in lines):
        lines[:] = [".. markdown-docstring::", ""] + [f"   {line}" if line else "" for line in lines]


def setup(app):
    app.add_directive("markdown-docstring", MarkdownDocstring)
    app.connect("autodoc-process-docstring", _as_markdown)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
