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
import warnings
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "adk_eval_action"
#: A module past this many lines is a warning: look for the concern that wants its own
#: module, and split there, or leave it whole if it is one concern (a cut made only to pass
#: a count scatters one idea over two files).
WARN_MODULE_LINES = 500
#: Past this a module is no longer one concern anyone can hold in mind: the test fails.
MAX_MODULE_LINES = 1000
MAX_FUNCTION_LINES = 60


class LongModuleWarning(Warning):
    """Not a UserWarning, which pyproject.toml's filterwarnings hides: pytest's summary
    shows this one."""


@functools.cache
def _modules() -> dict[str, Path]:
    """Dotted name below the package (``adk.evaluate.engine``) -> file."""
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
    """Functions fit a screen; a module past ``WARN_MODULE_LINES`` is named in a warning (a
    nudge to find the concern that wants its own module, not scissors), one past
    ``MAX_MODULE_LINES`` fails."""
    too_long, too_big, long_ones = [], [], []
    for name, path in _modules().items():
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            too_big.append(f"{name}: {lines} lines")
        elif lines > WARN_MODULE_LINES:
            long_ones.append(f"{name} ({lines})")
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}.{node.name}: {length} lines")
    if long_ones:
        warnings.warn(f"modules over {WARN_MODULE_LINES} lines (one concern each?): "
                      + ", ".join(long_ones), LongModuleWarning, stacklevel=1)
    assert not too_big and not too_long, "\n".join(too_big + too_long)


def _private_imports() -> set[str]:
    found: set[str] = set()
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


#: Another library's private names (one leading underscore: an attribute, a module, a
#: function) are reached only in ``adk/compat.py``, each behind a named function that says
#: which google-adk, google-genai, google-auth or httpx module keeps it and for which
#: versions, so that a rename in a new version shows up in one module. These names of the
#: standard library are read elsewhere, each for the reason given.
PRIVATE_NAMES_HOME = "adk.compat"
STANDARD_PRIVATE_NAMES = {
    "_asdict": "namedtuple's documented method (analysis/comparison.py)",
    "_MAXLINE": "http.client's header line limit, read with a default (github/transport.py)",
    "_Hash": "hashlib's digest type, in an annotation (project/inputs.py)",
    "_exit": "os._exit, the documented exit without waiting for threads (run/ending.py)",
}
_ATTRIBUTE_FUNCTIONS = {"getattr", "hasattr", "setattr", "delattr"}


def _private(name: str) -> bool:
    return len(name) > 1 and name.startswith("_") and not name.startswith("__")


def _private_strings(node: ast.AST) -> list[str]:
    """The strings of a tuple, list or set made of private names only (``("_llm", "_x")``:
    attribute names read in a loop); [] for any other node."""
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or not node.elts:
        return []
    names = [e.value for e in node.elts if isinstance(e, ast.Constant)]
    strings = [n for n in names if isinstance(n, str) and _private(n)]
    return strings if len(strings) == len(node.elts) else []


@functools.cache
def _own_private_names() -> frozenset[str]:
    """Every private name the package defines (outside compat.py): functions, classes,
    assigned names (module, class and pydantic private attributes), ``__slots__`` and the
    ``self._x``/``cls._x`` its methods assign."""
    own: set[str] = set()
    for name, path in _modules().items():
        if name == PRIVATE_NAMES_HOME:
            continue  # what compat.py reaches is another library's
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                own.add(node.id)
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}):
                own.add(node.attr)
            elif isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
                own.update(_private_strings(node.value))
    return frozenset(n for n in own if _private(n))


def _reached_private_names(tree: ast.Module, own: frozenset[str]) -> list[str]:
    """Each private name of another library that ``tree`` reaches, as ``LINE: NAME``: an
    import of a private module or name; an attribute read or written, or named in a tuple of
    names (read in a loop), that the package does not define itself (``own``: a name it
    also defines is not told apart); a constant name given to getattr, hasattr, setattr or
    delattr on anything but ``self``/``cls``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        reflective = False  # getattr & co. on another object: its name counts even if ours
        if isinstance(node, ast.Import):
            names = [p for a in node.names for p in a.name.split(".")]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            if not (node.module or "").startswith("adk_eval_action"):
                names = [*(node.module or "").split("."), *(a.name for a in node.names)]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in _ATTRIBUTE_FUNCTIONS and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            names = [node.args[1].value]
            reflective = not (isinstance(node.args[0], ast.Name)
                              and node.args[0].id in {"self", "cls"})
        else:
            names = _private_strings(node)
        always = reflective or isinstance(node, (ast.Import, ast.ImportFrom))
        found += [(getattr(node, "lineno", 0), n) for n in names
                  if _private(n) and (always or n not in own)]
    return [f"{line}: {name}" for line, name in sorted(set(found))]


def test_private_names_of_other_libraries_only_in_compat() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{hit}"
             for name, path in _modules().items() if name != PRIVATE_NAMES_HOME
             for hit in _reached_private_names(_tree(path), _own_private_names())
             if hit.split(": ", 1)[1] not in STANDARD_PRIVATE_NAMES]
    assert not found, ("reach another library's private names through a function of "
                       "adk/compat.py:\n" + "\n".join(found))


def test_the_private_name_check_finds_each_kind() -> None:
    tree = ast.parse(
        "from google.auth import _cloud_sdk\n"
        "import google.adk.evaluation._retry_options_utils\n"
        "from google.genai._api_client import BaseApiClient\n"
        "simulator._llm = RetryingLlm.wrap(llm)\n"
        "ok = getattr(evaluator, '_metric_function', callable)\n"
        "for attribute in ('_judge_model', '_other'):\n"
        "    pass\n"
        "self._calls = calls  # ok: the package's own\n"
        "ok = name.endswith('_API_KEY')\n"
        "registry = getattr(MetricEvaluatorRegistry(), '_calls', None)\n")
    assert _reached_private_names(tree, frozenset({"_calls", "_judge_model"})) == [
        "1: _cloud_sdk", "2: _retry_options_utils", "3: _api_client", "4: _llm",
        "5: _metric_function", "6: _other", "10: _calls"]
