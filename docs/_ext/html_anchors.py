"""The chapters mark link targets with `<a id="name"></a>` (Jupyter and GitHub honour it) and link
to them across chapters (`../ch01_graph/ch01_graph.ipynb#reference-library`). Sphinx sees raw HTML
there; this transform turns each such anchor into a label of its page, so those links resolve on
the site too, and a link to a name no page defines still fails the strict build."""

import re

from docutils import nodes
from sphinx.transforms import SphinxTransform

ANCHOR = re.compile(r'\s*<a\s+(?:id|name)="([^"]+)"\s*>\s*(</a>)?\s*')


class HtmlAnchors(SphinxTransform):
    default_priority = 100

    def apply(self):
        for raw in list(self.document.findall(nodes.raw)):
            match = ANCHOR.fullmatch(raw.astext()) if raw.get("format") == "html" else None
            if match is None:
                continue
            name = match.group(1)
            target = nodes.target("", "", ids=[name], names=[name])
            closing = raw.next_node(descend=False, siblings=True)
            if match.group(2) is None and isinstance(closing, nodes.raw) and closing.astext().strip() == "</a>":
                closing.parent.remove(closing)
            raw.replace_self(target)
            self.document.note_explicit_target(target)


def setup(app):
    app.add_transform(HtmlAnchors)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
