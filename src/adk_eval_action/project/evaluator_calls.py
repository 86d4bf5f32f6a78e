"""Suites from the ``AgentEvaluator.evaluate`` calls of a repository's tests.

google/adk-samples and many community repositories evaluate in pytest::

    await AgentEvaluator.evaluate(
        "customer_service",
        os.path.join(os.path.dirname(__file__), "eval_data/simple.test.json"),
        num_runs=1,
    )

Each call names the agent as a module (``agent_module``: ``customer_service`` or
``app.agent``, imported from the test's import path: its folder, the folders above it,
the repository root and its ``src/``) and the eval data
(``eval_dataset_file_path_or_dir``: a file, or a folder whose ``*.test.json`` files are
found recursively), each with the ``test_config.json`` beside it as its eval config
(google.adk.evaluation.agent_evaluator: ``AgentEvaluator.evaluate``,
``find_config_for_test_file``). The arguments are read from the source without running
it: string constants, f-strings, ``__file__``, ``os.path.join``/``dirname``/``abspath``,
``pathlib.Path(...)`` with ``/``, ``.parent``, ``.parents[n]`` and ``.resolve()``,
``str(...)``, module-level constants, and ``pytest.mark.parametrize`` values. A call whose
arguments are computed otherwise is not a suite.
"""

from __future__ import annotations

import ast
import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from adk_eval_action.project.agent_shapes import is_agent_dir
from adk_eval_action.project.commands import DeclaredSuite, inside, shown

__all__ = ["evaluator_suites"]

#: Parametrized bindings tried per test function, at most.
MAX_BINDINGS = 64
_DEPTH = 20


class _Scope:
    """What a name means where a call is: the module's constants, the parametrized values
    of the enclosing test, and ``__file__``."""

    def __init__(self, path: Path, constants: dict[str, ast.expr], bound: dict[str, Any]):
        self.path = path
        self.constants = constants
        self.bound = bound


def _call_name(func: ast.expr) -> str:
    """``os.path.join`` for a call of ``os.path.join``; ``""`` for another callee."""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
        return ".".join(reversed(parts))
    return ""


def _path_call(name: str, args: list[Any]) -> Any:
    """The value of a path function of the standard library, or None."""
    last = name.rsplit(".", 1)[-1]
    strings = all(isinstance(a, str | Path) for a in args)
    if not strings or not args and last not in ("cwd", "getcwd"):
        return None
    if last == "str" and len(args) == 1:
        return str(args[0])
    if last in ("Path", "PurePath", "PosixPath"):
        return Path(*args)
    if last == "join" and name.endswith("path.join"):
        return os.path.join(*[str(a) for a in args])
    if last == "dirname" and len(args) == 1:
        return os.path.dirname(str(args[0]))
    if last in ("abspath", "realpath", "normpath", "fspath") and len(args) == 1:
        return args[0]
    return None


def _value(node: ast.expr, scope: _Scope, depth: int = 0) -> Any:
    """A str or Path ``node`` evaluates to where it is (module docstring), or None."""
    if depth > _DEPTH:
        return None
    deeper = depth + 1
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        if node.id == "__file__":
            return str(scope.path)
        if node.id in scope.bound:
            return scope.bound[node.id]
        found = scope.constants.get(node.id)
        return _value(found, scope, deeper) if found is not None else None
    if isinstance(node, ast.JoinedStr):
        pieces = [_value(v.value if isinstance(v, ast.FormattedValue) else v, scope, deeper)
                  for v in node.values]
        return "".join(str(p) for p in pieces) if all(
            isinstance(p, str | Path) for p in pieces) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.Add):
        left, right = _value(node.left, scope, deeper), _value(node.right, scope, deeper)
        if isinstance(left, Path) and isinstance(right, str | Path):
            return left / right
        if isinstance(node.op, ast.Add) and isinstance(left, str) and isinstance(right, str):
            return left + right
        return None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _value(node.value, scope, deeper)
        return Path(inner).parent if isinstance(inner, str | Path) else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
            and node.value.attr == "parents" and isinstance(node.slice, ast.Constant) \
            and isinstance(node.slice.value, int):
        inner = _value(node.value.value, scope, deeper)
        parents = Path(inner).parents if isinstance(inner, str | Path) else ()
        return parents[node.slice.value] if node.slice.value < len(parents) else None
    if isinstance(node, ast.Call):
        name = _call_name(node.func)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute") \
                and not node.args:
            return _value(node.func.value, scope, deeper)
        return _path_call(name, [_value(a, scope, deeper) for a in node.args])
    return None


def _is_evaluate(call: ast.Call) -> bool:
    return _call_name(call.func).endswith("AgentEvaluator.evaluate")


def _argument(call: ast.Call, keyword: str, position: int) -> ast.expr | None:
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    return call.args[position] if len(call.args) > position else None


def _parametrized(function: ast.AST, scope: _Scope) -> list[dict[str, Any]]:
    """The bindings of a test's ``pytest.mark.parametrize("name", [values])`` decorators
    (one name each, values it can read), at most :data:`MAX_BINDINGS`; ``[{}]`` when none."""
    choices: list[list[tuple[str, Any]]] = []
    for decorator in getattr(function, "decorator_list", []):
        if not (isinstance(decorator, ast.Call) and _call_name(decorator.func).endswith(
                "parametrize") and len(decorator.args) >= 2):
            continue
        names, values = decorator.args[0], decorator.args[1]
        if not (isinstance(names, ast.Constant) and isinstance(names.value, str)
                and "," not in names.value and isinstance(values, ast.List | ast.Tuple)):
            continue
        read = [_value(v, scope) for v in values.elts]
        choices.append([(names.value.strip(), v) for v in read if v is not None])
    combos = itertools.islice(itertools.product(*choices), MAX_BINDINGS)
    return [dict(combo) for combo in combos] or [{}]


def _calls(tree: ast.Module) -> Iterator[tuple[ast.AST | None, ast.Call]]:
    """Each ``AgentEvaluator.evaluate`` call with the function it is in (None: module)."""
    def visit(node: ast.AST, function: ast.AST | None) -> Iterator[tuple[ast.AST | None,
                                                                        ast.Call]]:
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) \
                else function
            if isinstance(child, ast.Call) and _is_evaluate(child):
                yield inner, child
            yield from visit(child, inner)
    yield from visit(tree, None)


def _existing(value: Any, bases: list[Path]) -> Path | None:
    """``value`` as an existing path: absolute as it is, relative from the first of
    ``bases`` where it exists."""
    if not isinstance(value, str | Path):
        return None
    path = Path(value)
    if path.is_absolute():
        return path.resolve() if path.exists() else None
    return next(((b / path).resolve() for b in bases if (b / path).exists()), None)


def _agent_folder(module: Any, bases: list[Path], root: Path) -> Path | None:
    """The agent folder of an ``agent_module`` name (``app`` or ``app.agent``), found from
    the first of ``bases`` where it is an agent folder inside ``root``."""
    if not isinstance(module, str) or not module:
        return None
    dotted = module[:-len(".agent")] if module.endswith(".agent") else module
    relative = Path(*dotted.split("."))
    return next(((b / relative).resolve() for b in bases
                 if (b / relative).is_dir() and is_agent_dir(b / relative)
                 and inside(b / relative, root)), None)


def _suites(agent: Path, data: Path, source: str) -> list[DeclaredSuite]:
    """One suite per eval config of the eval data (``test_config.json`` beside each file)."""
    files = sorted(data.rglob("*.test.json")) if data.is_dir() else [data]
    by_config: dict[Path | None, list[Path]] = {}
    for file in (f for f in files if f.is_file() and inside(f, data)):
        beside = file.parent / "test_config.json"
        by_config.setdefault(beside if beside.is_file() else None, []).append(file.resolve())
    return [DeclaredSuite(agent_dir=agent, eval_sets=sorted(found), eval_config=config,
                          source=source) for config, found in by_config.items()]


def evaluator_suites(path: Path, text: str, root: Path) -> list[DeclaredSuite]:
    """The suites the ``AgentEvaluator.evaluate`` calls of one Python file (``text``, at
    ``path``) name (module docstring)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    constants = {node.targets[0].id: node.value for node in tree.body
                 if isinstance(node, ast.Assign) and len(node.targets) == 1
                 and isinstance(node.targets[0], ast.Name)}
    root = root.resolve()
    here = path.resolve().parent
    bases = [here, *(p for p in here.parents if p == root or root in p.parents)]
    if root not in bases:
        bases.append(root)
    bases.append(root / "src")  # the src layout, on pytest's `pythonpath` there
    found: list[DeclaredSuite] = []
    for function, call in _calls(tree):
        plain = _Scope(path.resolve(), constants, {})
        for bound in _parametrized(function, plain) if function is not None else [{}]:
            scope = _Scope(path.resolve(), constants, bound)
            agent_node = _argument(call, "agent_module", 0)
            data_node = _argument(call, "eval_dataset_file_path_or_dir", 1)
            if agent_node is None or data_node is None:
                continue
            agent = _agent_folder(_value(agent_node, scope), bases, root)
            data = _existing(_value(data_node, scope), [root, *bases])
            if agent is not None and data is not None and inside(data, root):
                found += _suites(agent, data, f"{shown(path, root)}:{call.lineno}")
    return found
