"""The shape of the package, checked: imports point one way (down the stages of the data
flow, docs/architecture.md), no import cycles, google-adk only behind ``adk/``, the test
models never imported by the runtime, modules and functions small enough to read, and no
citation of a document a reader of the public repository cannot open.

Every import statement counts, including those inside functions and under
``TYPE_CHECKING``: a late import is still a dependency.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "adk_eval_action"

#: Stage of each top-level module or package, lowest first. A module may import its own
#: stage and lower ones only. ``testing`` (stand-in models for tests and the offline
#: example) is outside the stages: nothing in the runtime may import it.
STAGES: dict[str, int] = {
    "errors": 0,
    "git": 0,
    "files": 0,
    "text": 0,
    "redaction": 0,
    "children": 0,
    "logscope": 0,
    "project": 1,
    "results": 2,
    "settings": 3,
    "adk": 4,
    "analysis": 5,
    "report": 6,
    "outcome": 7,
    "github": 8,
    "baseline": 9,
    "run": 10,
    "cli": 11,
    "action": 11,
}
GOOGLE_ADK_ALLOWED = {"adk", "testing"}
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


def _imports(name: str, path: Path) -> set[str]:
    """Absolute module names imported anywhere in a file (relative imports resolved)."""
    tree = _tree(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["adk_eval_action", *package[: len(package) - node.level + 1]]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Internal import graph: module -> modules of this package it imports."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imports(name, path):
            if imported.startswith("adk_eval_action."):
                dotted = imported.removeprefix("adk_eval_action.")
                # `from pkg import module` names a module; `from module import func` does not.
                while dotted and dotted not in modules:
                    dotted = dotted.rpartition(".")[0]
                if dotted and dotted != name:
                    targets.add(dotted)
        graph[name] = targets
    return graph


def _stage(module: str) -> str:
    return module.split(".")[0]


def test_every_module_has_a_stage() -> None:
    unknown = sorted({_stage(m) for m in _modules()} - set(STAGES) - {"testing", ""})
    assert not unknown, f"give these a stage in STAGES (and docs/architecture.md): {unknown}"


def test_imports_point_down_the_stages() -> None:
    wrong = [
        f"{module} ({_stage(module)}) imports {target} ({_stage(target)})"
        for module, targets in _graph().items()
        for target in sorted(targets)
        if _stage(target) == "testing"
        and _stage(module) != "testing"
        or _stage(module) in STAGES
        and _stage(target) in STAGES
        and STAGES[_stage(target)] > STAGES[_stage(module)]
    ]
    assert not wrong, "a lower stage imports a higher one:\n" + "\n".join(wrong)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_google_adk_only_behind_the_adk_package() -> None:
    wrong = sorted(
        name
        for name, path in _modules().items()
        if _stage(name) not in GOOGLE_ADK_ALLOWED
        and any(i.startswith(("google.adk", "google.genai")) for i in _imports(name, path))
    )
    assert not wrong, f"import google-adk only in adk/ (these do): {wrong}"


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
#: issue tracker ("issue 13"), its GitHub Actions notes ("contract §5", or a bare "(§6)")
#: and the reference folder beside the repository (``../shared/...``). Cite the GitHub
#: docs page, the ADK module and version, a public report (``google/adk-python#3593``) or
#: docs/*.md instead.
UNSEEN_CITATION = re.compile(
    r"contract\s+§|\(§\s*\d|[,;]\s*§\s*\d+\)|\bissues?\s+\d|\.\./shared\b"
    r"|\bshared/(?:reference|fixtures|tools)\b",
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
            "ok: google/adk-python#5732, a shared run\n"
            "runs/$GITHUB_RUN_ID`` (§6)\n"
            "(``AttachmentSizeLimit``, §2)\n"
            "ok: RFC 9110 §10.2.3; Davison and Hinkley 1997, §4.4\n")
    assert _unseen_citations(text) == [
        "2: contract §", "3: issue 1", "5: ../shared", "6: shared/reference", "9: (§6",
        "10: , §2)"]
