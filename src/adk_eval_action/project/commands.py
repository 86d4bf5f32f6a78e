"""Suites from how a repository runs its evals: the ``adk eval`` commands it keeps.

Repositories say how they evaluate: ``adk eval AGENT FILE... --config_file_path CFG`` in a
Makefile, a shell script, a CI workflow, ``pyproject.toml`` or ``justfile`` tasks, or the
shell blocks of their README; ``AgentEvaluator.evaluate(agent_module=...,
eval_dataset_file_path_or_dir=...)`` in their tests
(:mod:`adk_eval_action.project.evaluator_calls`). Each names the agent, the eval set files
and the eval config: a :class:`DeclaredSuite`, with where it was said (``Makefile:12``).

An ``adk eval`` command is read as google-adk's CLI reads it
(google.adk.cli.cli_tools_click ``cli_eval``): the first argument is the agent folder, the
others eval set files (a ``:eval_1,eval_2`` suffix names cases, which the suite does not
narrow), ``--config_file_path`` the eval config; without it, the ``test_config.json`` beside
the eval set when there is one file (``_resolve_eval_config_file_path``). Paths are tried
from a ``cd DIR &&`` before the command, the file's folder and the repository root, first
that names an agent folder; Make and shell variables assigned in the same file are
substituted, shell globs expanded. A command whose agent or eval sets cannot be resolved
(a variable set elsewhere, a file that does not exist) is not a suite.
"""

from __future__ import annotations

import glob
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from adk_eval_action.project.agent_shapes import is_agent_dir
from adk_eval_action.project.evalset_files import holds_eval_set, named_as_eval_set

__all__ = ["COMMAND_NAMES", "COMMAND_SUFFIXES", "MARKDOWN_SUFFIXES", "DeclaredSuite",
           "command_suites", "inside", "shown"]

#: ``adk eval`` options that take a value (google.adk.cli.cli_tools_click).
VALUE_OPTIONS = frozenset({"--config_file_path", "--eval_storage_uri", "--log_level",
                           "--enable_features", "--disable_features"})
#: Files whose lines are shell commands (or hold them in strings), by name and suffix.
COMMAND_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile", "justfile", "Justfile",
                           "pyproject.toml", "Taskfile.yml", "Taskfile.yaml", "tox.ini",
                           "noxfile.py", "package.json"})
COMMAND_SUFFIXES = (".mk", ".sh", ".bash")
MARKDOWN_SUFFIXES = (".md", ".markdown")
_ADK_EVAL = re.compile(r"(?P<open>^|[\s;&|\"'(`=])(?:[\w./-]*/)?adk\s+eval\s+(?P<rest>.*)")
_CD = re.compile(r"(?:^|[\s;&|\"'(])cd\s+(?P<dir>[^\s;&|]+)\s*&&")
_ASSIGN = re.compile(
    r"^\s*(?:export\s+)?(?P<name>[A-Za-z_]\w*)\s*(?::=|\?=|\+=|=)\s*(?P<value>.*)$")
_VARIABLE = re.compile(r"\$\((?P<make>\w+)\)|\$\{(?P<brace>\w+)(?::-(?P<default>[^}]*))?\}"
                       r"|\$(?P<plain>[A-Za-z_]\w*)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_MAKE_CALL = re.compile(r"\$\((?P<name>if|wildcard) ")


class DeclaredSuite(BaseModel):
    """A suite a repository's own command or test names: the agent folder, the eval set
    files (absolute, sorted), the eval config (None: ADK's default criteria), and
    ``source``, where it was said (``Makefile:12``, repository-relative POSIX)."""

    agent_dir: Path
    eval_sets: list[Path]
    eval_config: Path | None = None
    source: str


def shown(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` (POSIX), as given when outside it."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix() or "."
    except ValueError:
        return str(path)


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (symbolic links followed) lies in ``root``: what a repository's own
    file names is never taken from outside it."""
    resolved, top = path.resolve(), root.resolve()
    return resolved == top or top in resolved.parents


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Lines with backslash continuations joined, each with its first line's number."""
    start, parts = 0, list[str]()
    for number, line in enumerate(text.splitlines(), 1):
        if not parts:
            start = number
        if line.rstrip().endswith("\\"):
            parts.append(line.rstrip()[:-1])
            continue
        parts.append(line)
        yield start, " ".join(p.strip() for p in parts)
        parts = []
    if parts:
        yield start, " ".join(p.strip() for p in parts)


def _fenced(text: str) -> str:
    """The lines of a Markdown file's fenced code blocks; other lines blank (numbers kept)."""
    out, inside = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            inside = not inside
            out.append("")
            continue
        out.append(line if inside else "")
    return "\n".join(out)


def _variables(text: str) -> dict[str, str]:
    """Make and shell assignments of the file (``NAME := value``, ``NAME=value``): the last
    one of each name, its value unquoted; a value of several words (a command, a list) is
    not one."""
    found = {}
    for _, line in _logical_lines(text):
        match = _ASSIGN.match(line)
        if match is None:
            continue
        value = match.group("value").strip()
        if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
            found[match.group("name")] = value[1:-1]
        elif value and " " not in value:
            found[match.group("name")] = value
    return found


def _substitute(token: str, variables: dict[str, str]) -> str | None:
    """``token`` with ``$(NAME)``, ``${NAME}``, ``${NAME:-default}`` and ``$NAME``
    substituted; None when a variable is not known."""
    missing = False

    def value(match: re.Match[str]) -> str:
        nonlocal missing
        name = match.group("make") or match.group("brace") or match.group("plain")
        if name in variables:
            return variables[name]
        if match.group("default") is not None:
            return match.group("default")
        missing = True
        return ""

    done = _VARIABLE.sub(value, token.replace("$$", "$"))
    return None if missing or "$(" in done or "`" in done else done


def _unbalanced_close(text: str) -> int:
    """The index of the first ``)`` in ``text`` that closes nothing opened in it, or -1."""
    depth = 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return index
    return -1


def _arguments(rest: str, opener: str) -> list[str]:
    """The words of an ``adk eval`` command up to the end of its shell command: what held
    it closing (``opener``: the quote, backtick or parenthesis before ``adk``), then
    ``&&``, ``||``, ``;`` or ``|``."""
    if opener in "\"'`" and opener:
        rest = rest.split(opener, 1)[0]
    elif opener == "(" and (end := _unbalanced_close(rest)) >= 0:
        rest = rest[:end]
    rest = re.split(r"\s(?:&&|\|\|)\s|;|\s\|\s", rest, maxsplit=1)[0]
    try:
        return shlex.split(rest, comments=True)
    except ValueError:
        return rest.split()


def _parsed(words: list[str]) -> tuple[list[str], str | None]:
    """(positional arguments, ``--config_file_path``) of ``adk eval``'s words."""
    positional: list[str] = []
    config = None
    index = 0
    while index < len(words):
        word = words[index]
        name, has_value, value = word.partition("=")
        if word.startswith("--"):
            if not has_value and name in VALUE_OPTIONS and index + 1 < len(words):
                value, index = words[index + 1], index + 1
            if name == "--config_file_path":
                config = value
        elif not word.startswith("-"):
            positional.append(word)
        index += 1
    return positional, config


def _files(pattern: str, base: Path) -> list[Path]:
    """The eval set files a word names from ``base``: a glob expanded, a ``:cases`` suffix
    dropped; only existing files that hold an eval set (by name or content)."""
    if ":" in pattern and not (base / pattern).is_file():
        pattern = pattern.rsplit(":", 1)[0]
    if glob.has_magic(pattern):
        found = [Path(p) for p in glob.glob(str(base / pattern))]
    else:
        found = [base / pattern]
    return sorted(p for p in found if p.is_file()
                  and (named_as_eval_set(p.name) or holds_eval_set(p)))


def _resolved(
    words: list[str], bases: list[Path], variables: dict[str, str], root: Path,
) -> tuple[Path, list[Path], Path | None] | None:
    """The agent folder, eval set files and eval config of one command's words, from the
    first of ``bases`` where the agent is an agent folder inside ``root`` (eval sets and
    eval config outside it are left out); None when none is."""
    substituted = [_substitute(w, variables) for w in words]
    if any(w is None for w in substituted):
        return None
    positional, config = _parsed([w for w in substituted if w is not None])
    if len(positional) < 2:
        return None
    for base in bases:
        agent = (base / positional[0]).resolve()
        if not agent.is_dir() or not is_agent_dir(agent) or not inside(agent, root):
            continue
        eval_sets = [p.resolve() for word in positional[1:] for p in _files(word, base)
                     if inside(p, root)]
        if not eval_sets:
            return None
        if config is not None:
            chosen = (base / config).resolve()
            usable = chosen.is_file() and inside(chosen, root)
            return agent, sorted(set(eval_sets)), chosen if usable else None
        beside = eval_sets[0].parent / "test_config.json"
        single = len(positional) == 2 and beside.is_file()
        return agent, sorted(set(eval_sets)), beside if single else None
    return None


def _closing(text: str, at: int) -> int:
    """The index of the ``)`` that closes the ``(`` at ``text[at]``, or -1."""
    depth = 1
    for index in range(at + 1, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _split_arguments(text: str) -> list[str]:
    """A Make function's arguments: ``text`` split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    return [*parts, text[start:]]


def _make_functions(text: str, folder: Path, variables: dict[str, str]) -> str:
    """``text`` with Make's ``$(if COND,THEN,ELSE)`` and ``$(wildcard FILE)`` expanded
    (FILE from ``folder``; a variable in COND is its value, empty when not set), as
    agent-starter-pack's ``make eval`` chooses its eval config."""
    match = _MAKE_CALL.search(text)
    while match is not None:
        end = _closing(text, match.start() + 1)
        if end < 0:
            break
        inner = _make_functions(text[match.end():end], folder, variables)
        if match.group("name") == "wildcard":
            done = " ".join(p for p in inner.split() if (folder / p).exists())
        else:
            condition, *branches = _split_arguments(inner) + [""]
            condition = _VARIABLE.sub(lambda m: variables.get(
                m.group("make") or m.group("brace") or m.group("plain") or "", ""), condition)
            done = branches[0] if condition.strip() else branches[1] if len(branches) > 2 else ""
        text = text[:match.start()] + done + text[end + 1:]
        match = _MAKE_CALL.search(text, match.start() + len(done))
    return text


def command_suites(path: Path, text: str, root: Path) -> list[DeclaredSuite]:
    """The suites the ``adk eval`` commands of one file (``text``, at ``path``) name."""
    if path.suffix in MARKDOWN_SUFFIXES:
        text = _fenced(text)
    variables = _variables(text)
    if path.name in ("Makefile", "makefile", "GNUmakefile") or path.suffix == ".mk":
        text = _make_functions(text, path.parent, variables)
    found = []
    for number, line in _logical_lines(text):
        if line.lstrip().startswith("#") and path.suffix not in MARKDOWN_SUFFIXES:
            continue  # a comment (a shell prompt's `#` is a Markdown line's first word)
        for match in _ADK_EVAL.finditer(line):
            cd = [m.group("dir") for m in _CD.finditer(line[:match.start("rest")])]
            # A script's `cd` is from where it runs: its folder, or the repository root.
            moved = [(base / d).resolve() for d in cd[-1:] for base in (path.parent, root)
                     if _substitute(d, variables) is not None]
            bases = [*moved, path.parent.resolve(), root.resolve()]
            words = _arguments(match.group("rest"), match.group("open"))
            resolved = _resolved(words, bases, variables, root)
            if resolved is not None:
                agent, eval_sets, config = resolved
                found.append(DeclaredSuite(agent_dir=agent, eval_sets=eval_sets,
                                           eval_config=config,
                                           source=f"{shown(path, root)}:{number}"))
    return found
