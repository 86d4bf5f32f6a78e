"""The comment and summary as GitHub renders them: a GFM parser (markdown-it-py with tables
and raw HTML, as GitHub's CommonMark + GFM tables) and structure checks on its output.

The checks, each returning a list of problems (empty: fine):

* every table row has as many cells as its header (cells counted from the source line by
  GFM's rule: split on pipes that are not backslash-escaped, outer pipes dropped), and every
  delimiter row in the source starts a table the parser recognised;
* ``<details>`` blocks balance and nest (never closed before opened);
* the rendered HTML holds only the tags the templates write (no ``<script>``, ``<img>``,
  nor extra ``<details>`` from data), no comment marker, and no ``@name`` outside code that
  GitHub would turn into a mention.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from markdown_it import MarkdownIt

ALLOWED_TAGS = {
    "a", "b", "blockquote", "br", "code", "del", "details", "em", "h2", "h3", "hr", "li",
    "ol", "p", "pre", "strong", "summary", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
_MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")


def parser() -> MarkdownIt:
    """CommonMark with raw HTML, plus GFM tables and strikethrough."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def gfm_html(markdown: str) -> str:
    """``markdown`` rendered to HTML as GitHub renders it (before its sanitiser)."""
    return parser().render(markdown)


def cells(line: str) -> int:
    """Cells of a table row source line, by GFM's rule (escaped pipes do not split)."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return len(re.split(r"(?<!\\)\|", text))


def table_problems(markdown: str) -> list[str]:
    """Rows whose cell count differs from their header's; delimiter rows not parsed."""
    lines = markdown.splitlines()
    problems = []
    tables = [t for t in parser().parse(markdown) if t.type == "table_open"]
    for table in tables:
        start, end = table.map or (0, 0)
        header = cells(lines[start])
        for number in range(start + 1, end):
            if lines[number].strip() and cells(lines[number]) != header:
                problems.append(f"line {number + 1}: {cells(lines[number])} cells, header {header}")
    delimiters = [i for i, line in enumerate(lines) if re.match(r"^\|?\s*:?-{3,}:?\s*\|", line)]
    parsed = {t.map[0] + 1 for t in tables if t.map}
    problems += [
        f"line {i + 1}: a delimiter row outside a table" for i in delimiters if i not in parsed
    ]
    return problems


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.problems: list[str] = []
        self.code_depth = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)
        if tag in ("code", "pre"):
            self.code_depth += 1
        if tag == "details":
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self.code_depth -= 1
        if tag == "details":
            if not self.stack:
                self.problems.append("</details> without <details>")
            else:
                self.stack.pop()

    def handle_comment(self, data: str) -> None:
        self.problems.append(f"an HTML comment survived: <!--{data[:40]}-->")

    def handle_data(self, data: str) -> None:
        if self.code_depth == 0 and _MENTION.search(data):
            self.problems.append(f"a mention outside code: {data[:60]!r}")


def html_problems(markdown: str) -> list[str]:
    """Unbalanced ``<details>``, tags the templates never write, comments, mentions."""
    tags = _Tags()
    tags.feed(gfm_html(markdown))
    tags.close()
    problems = list(tags.problems)
    if tags.stack:
        problems.append(f"{len(tags.stack)} <details> not closed")
    problems += [f"raw <{t}> from data" for t in sorted(set(tags.tags) - ALLOWED_TAGS)]
    return problems


def structure_problems(markdown: str) -> list[str]:
    """All of the module's checks."""
    return table_problems(markdown) + html_problems(markdown)


def details_count(markdown: str) -> int:
    """``<details>`` elements in the rendered HTML."""
    return len(re.findall(r"<details[ >]", gfm_html(markdown)))
