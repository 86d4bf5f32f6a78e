"""The shape of the package, checked: modules and functions small enough to read, no private
name imported across modules, and no citation of a document a reader of the public
repository cannot open.

The import rules (imports point down the stages of docs/architecture.md, every top-level
module has a stage, no import cycle, Google's libraries only behind ``adk/``, the test
models never imported by the runtime) are import-linter's contracts in pyproject.toml
(``[tool.importlinter]``), which ``scripts/test.sh`` checks with ``lint-imports`` beside
ruff and mypy.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "adk_eval_action"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


@functools.cache
def _modules() -> dict[str, Path]:
    """Dotted name below the package (``adk.engine``) -> file."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            out[".".join(parts)] = path
    return out


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the checks here."""
    return ast.parse(path.read_text(encoding="utf-8"))


def test_modules_and_functions_stay_small() -> None:
    """No exceptions (the last oversized modules and long functions were split)."""
    too_long, too_big = [], []
    for name, path in _modules().items():
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            too_big.append(f"{name}: {lines} lines")
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}.{node.name}: {length} lines")
    assert not too_big and not too_long, "\n".join(too_big + too_long)


def _private_imports() -> set[str]:
    found = set()
    for name, path in _modules().items():
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.ImportFrom) or node.level:
                continue
            source = (node.module or "").removeprefix("adk_eval_action.")
            if node.module and node.module.startswith("adk_eval_action") and source != name:
                found.update(
                    f"{name} imports {source}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                )
    return found


def test_no_private_names_imported_across_modules() -> None:
    """What two modules both need is a public function of one of them."""
    found = _private_imports()
    assert not found, "import public names only:\n" + "\n".join(sorted(found))


#: Citations of documents only the project's own machines have: the project's internal
#: issue tracker ("issue 13"), its GitHub Actions notes ("contract §5") and the reference
#: folder beside the repository (``../shared/...``). Cite the GitHub docs page, the ADK
#: module and version, a public report (``google/adk-python#3593``) or docs/*.md instead.
UNSEEN_CITATION = re.compile(
    r"contract\s+§|\bissues?\s+\d|\.\./shared\b|\bshared/(?:reference|fixtures|tools)\b",
    re.IGNORECASE)


def _unseen_citations(text: str) -> list[str]:
    """Each citation of an unseen document in ``text`` (also one broken over two lines), as
    ``LINE: the citation`` (lines numbered from 1)."""
    return [f"{text.count(chr(10), 0, found.start()) + 1}: {' '.join(found[0].split())}"
            for found in UNSEEN_CITATION.finditer(text)]


def test_the_package_cites_only_what_a_reader_can_open() -> None:
    """Every file of the package (code, docstrings, templates) cites sources a maintainer of
    the public repository can open."""
    found = [f"{path.relative_to(PACKAGE)}:{hit}"
             for path in sorted(PACKAGE.rglob("*")) if path.is_file()
             and path.suffix in {".py", ".j2", ".md", ".txt", ".json", ".yaml", ".yml"}
             for hit in _unseen_citations(path.read_text(encoding="utf-8"))]
    assert not found, "cite a page a reader can open:\n" + "\n".join(found)


def test_the_citation_check_finds_each_kind() -> None:
    text = ("ok: GitHub's workflow commands page\n"
            "(contract §3, \"Forks\")\n"
            "issue\n    13's limit\n"
            "see ``../shared/fixtures/real-evalsets``\n"
            "shared/reference/github-actions-contract.md\n"
            "ok: https://github.com/google/adk-python/issues/3593\n"
            "ok: google/adk-python#5732, a shared run\n")
    assert _unseen_citations(text) == [
        "2: contract §", "3: issue 1", "5: ../shared", "6: shared/reference"]
