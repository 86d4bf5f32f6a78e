"""The README stays short and the docs stay reachable: README.md fits a five-minute read,
docs/index.md names every page of docs/, and every relative link of the README and the docs
reaches a file that exists and, with a ``#fragment``, a heading of that file (by GitHub's
heading anchors: lower case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of ``page``'s headings (a repeated one gets ``-1``, ``-2``, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text()), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def test_the_readme_is_a_five_minute_read() -> None:
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= 250, f"README.md has {lines} lines: move the detail to docs/"


def test_the_index_names_every_page() -> None:
    index = (ROOT / "docs" / "index.md").read_text()
    linked = set(LINK.findall(index))
    missing = [p.name for p in DOCS if p.name != "index.md" and p.name not in linked]
    assert not missing, f"docs/index.md does not name {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_reach_a_file_and_heading(page: Path) -> None:
    broken = []
    for target in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto: — not this repository's files
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target}: no heading #{fragment} in {linked.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)
