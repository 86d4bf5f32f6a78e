"""Importing a repository's agent as ``adk eval`` does, with the process left as it was.

ADK's agent loader (google.adk.cli.utils.agent_loader.AgentLoader) puts the agents folder on
``sys.path``, imports ``<name>`` and reads ``<name>.agent.root_agent`` (or ``app``, or
``get_agent_async``). Two things are added here:

* The repository root is importable too, so a custom metric named ``my_agent.metrics.fn``
  (``code_config.name``) resolves without PYTHONPATH.
* Everything changed for the import is undone when the scope ends (:class:`ImportScope`):
  ``sys.path`` gets its entries back, and the ``sys.modules`` entries of the agent
  packages are those of before the scope. A same-named package of another folder (a second
  suite, the base commit's copy) is set aside while the scope is open and put back after,
  so it never shadows the agent being evaluated.
"""

from __future__ import annotations

import inspect
import sys
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

from adk_eval_action.adk.runtime.case_failures import innermost_user_frame
from adk_eval_action.adk.runtime.import_hints import import_hint
from adk_eval_action.adk.runtime.user_exits import described, exits_as_errors, unwrapped
from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.project.agent_shapes import ACCEPTED_SHAPES, typescript_adk
from adk_eval_action.results.agenttree import AgentRecord


class AgentLoadError(AdkEvalActionError):
    """The agent module failed to import or exposes no agent. ``path`` and ``line``: where
    the repository's code raised (absolute path, line from 1), None when not known;
    ``hint``: what to do (install a dependency, set PYTHONPATH, fix the code), None when
    nothing more is known."""

    def __init__(self, message: str, path: Path | None = None, line: int | None = None,
                 hint: str | None = None):
        super().__init__(message)
        self.path = path
        self.line = line
        self.hint = hint


@dataclass(frozen=True)
class LoadedAgent:
    """An imported agent: ``root_agent`` (an ADK ``BaseAgent``), the ``App`` wrapping it
    when the module defines ``app`` (else None), ``app_name`` (the package name, which
    ADK uses as the app name of sessions and eval sets), and the exit stack a
    ``get_agent_async`` factory returned with it (closed by :meth:`close`)."""

    app_name: str
    root_agent: Any
    app: Any = None
    exit_stack: Any = None

    async def close(self) -> None:
        """Closes what the factory opened for the agent (MCP sessions, clients), on the
        event loop it was made on; nothing for a module-level agent."""
        if self.exit_stack is not None:
            await self.exit_stack.aclose()


def _package_modules(name: str) -> dict[str, ModuleType]:
    """``sys.modules`` entries of the package ``name`` and its submodules."""
    return {k: m for k, m in sys.modules.items() if k == name or k.startswith(name + ".")}


def _inside(module: ModuleType, folder: Path) -> bool:
    module_file = getattr(module, "__file__", None) or ""
    return module_file.startswith(str(folder))


class ImportScope:
    """A context manager that makes agent packages importable and undoes it on exit.

    On entry each agent folder's parent and ``repo_root`` go to the front of ``sys.path``,
    and any ``sys.modules`` entry of an agent's package name that comes from another folder
    is set aside. On exit ``sys.path`` is restored to its entry value, the package names'
    ``sys.modules`` entries to what they were on entry, and every other module imported
    inside from those folders (a shared module of the repository, a custom metric module)
    is dropped, so a later scope on another checkout imports its own copy. Scopes nest;
    they are not meant to overlap otherwise (one event loop thread enters and leaves them
    in order).

    Args:
        agent_dirs: The agent folders (``.../my_agent`` holding ``__init__.py``); two with
            the same folder name cannot share a scope (the later one wins).
        repo_root: The repository root (for custom metric modules).
    """

    def __init__(self, agent_dirs: Iterable[Path], repo_root: Path) -> None:
        self._agent_dirs = [Path(d).resolve() for d in agent_dirs]
        self._repo_root = Path(repo_root).resolve()
        self._saved_path: list[str] = []
        self._saved_modules: dict[str, dict[str, ModuleType]] = {}
        self._before: set[str] = set()

    def __enter__(self) -> ImportScope:
        self._saved_path = list(sys.path)
        self._before = set(sys.modules)
        folders = [str(d.parent) for d in self._agent_dirs] + [str(self._repo_root)]
        for folder in reversed(folders):
            if folder not in sys.path:
                sys.path.insert(0, folder)
        for agent_dir in self._agent_dirs:
            saved = _package_modules(agent_dir.name)
            self._saved_modules[agent_dir.name] = saved
            for key, module in saved.items():
                if not _inside(module, agent_dir):
                    del sys.modules[key]
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        folders = [self._repo_root, *(d.parent for d in self._agent_dirs)]
        for key in set(sys.modules) - self._before:
            if any(_repo_file(sys.modules[key], folder) for folder in folders):
                del sys.modules[key]
        for name, saved in self._saved_modules.items():
            for key in _package_modules(name):
                del sys.modules[key]
            sys.modules.update(saved)
        self._saved_modules = {}
        sys.path[:] = self._saved_path


def agent_phases(agent_dirs: Iterable[Path]) -> list[list[Path]]:
    """``agent_dirs``, each once, in phases in which no two share a package name (one
    :class:`ImportScope` cannot hold both), in order: what a reader of many suites
    imports (each agent folder once, however many suites evaluate it)."""
    phases: list[dict[str, Path]] = []
    for folder in dict.fromkeys(agent_dirs):
        phase = next((p for p in phases if folder.name not in p), None)
        if phase is None:
            phases.append(phase := {})
        phase[folder.name] = folder
    return [list(p.values()) for p in phases]


async def load_agent(agent_dir: Path, repo_root: Path | None = None) -> LoadedAgent:
    """Imports the agent package ``agent_dir`` as google-adk's loaders do (inside an open
    :class:`ImportScope` that names it) and returns its agent: ``root_agent``, ``app`` or
    ``get_agent_async`` of ``<name>.agent`` (``agent.py`` or an ``agent/`` package), else of
    the package itself (its ``__init__.py``), else ``root_agent.yaml``
    (:mod:`adk_eval_action.project.agent_shapes`).

    ``get_agent_async`` is awaited on the running event loop. The agent's ``.env`` is
    loaded into ``os.environ`` as ``adk eval`` loads it
    (google.adk.cli.utils.envs.load_dotenv_for_agent). Paths in messages are relative to
    ``repo_root`` (default: the agent's parent folder).

    Raises:
        AgentLoadError: the import raised (the message names the file and line of the
            repository's code that raised, the hint what to do:
            :func:`~adk_eval_action.adk.runtime.import_hints.import_hint`), the folder holds
            an ADK for TypeScript agent, or no agent is exposed in any shape google-adk loads.
    """
    import importlib

    agent_dir = Path(agent_dir).resolve()
    root = Path(repo_root).resolve() if repo_root is not None else agent_dir.parent
    name = agent_dir.name
    shown = _relative(agent_dir, root)
    typescript = typescript_adk(agent_dir, root)
    if typescript is not None and not (agent_dir / "__init__.py").is_file():
        raise AgentLoadError(
            f"agent {shown} is an ADK for TypeScript agent ({_relative(typescript, root)}), "
            "which adk-eval-action does not run: it evaluates google-adk (Python) agents",
            hint="evaluate it with ADK for TypeScript's own tools")
    try:
        from google.adk.cli.utils import envs

        envs.load_dotenv_for_agent(name, str(agent_dir.parent))
    except Exception:  # noqa: BLE001 - a .env problem must not hide the import result
        pass
    try:
        with exits_as_errors():  # sys.exit() at import is the agent's import error
            package = importlib.import_module(name)
            modules = _agent_modules(package, name)
    except Exception as e:
        frame = _raised_at(e, agent_dir, root)
        raise AgentLoadError(
            f"agent {shown} failed to import: {described(e)}{_at(frame, root)}",
            *_place(frame), hint=import_hint(e, agent_dir, root),
        ) from e
    return await _agent_of(modules, agent_dir, root)


def _agent_modules(package: ModuleType, name: str) -> list[ModuleType]:
    """Where the agent may be, in ``adk eval``'s order: the package's ``agent`` module
    (imported by ``__init__.py`` or not), then the package itself.

    Raises:
        Exception: whatever importing ``<name>.agent`` raised, but its absence."""
    import importlib

    sub = getattr(package, "agent", None)
    if not isinstance(sub, ModuleType):
        try:
            sub = importlib.import_module(f"{name}.agent")
        except ModuleNotFoundError as e:
            if e.name != f"{name}.agent":
                raise
            sub = None
    return [m for m in (sub, package) if m is not None]


async def _agent_of(modules: list[ModuleType], agent_dir: Path, root: Path) -> LoadedAgent:
    from google.adk.apps.app import App

    name = agent_dir.name
    for module in modules:
        app = getattr(module, "app", None)
        if isinstance(app, App):
            return LoadedAgent(app_name=name, root_agent=app.root_agent, app=app)
        if hasattr(module, "root_agent"):
            return LoadedAgent(app_name=name, root_agent=module.root_agent)
        factory = getattr(module, "get_agent_async", None)
        if factory is not None:
            return await _from_factory(factory, agent_dir, root)
    config = agent_dir / "root_agent.yaml"
    if config.is_file():
        return _from_config(config, root)
    raise AgentLoadError(
        f"agent {_relative(agent_dir, root)}: no agent found ({ACCEPTED_SHAPES})",
        hint="expose the agent as `root_agent` in the agent folder's agent.py or __init__.py",
    )


async def _from_factory(factory: Any, agent_dir: Path, root: Path) -> LoadedAgent:
    try:
        with exits_as_errors():
            made = factory()
            made = await made if inspect.isawaitable(made) else made
        root_agent, exit_stack = made if isinstance(made, tuple) else (made, None)
    except Exception as e:
        frame = _raised_at(e, agent_dir, root)
        raise AgentLoadError(
            f"agent {_relative(agent_dir, root)}: get_agent_async failed: {described(e)}"
            f"{_at(frame, root)}", *_place(frame), hint=import_hint(e, agent_dir, root),
        ) from e
    return LoadedAgent(app_name=agent_dir.name, root_agent=root_agent, exit_stack=exit_stack)


def _from_config(config: Path, root: Path) -> LoadedAgent:
    """The agent of ``root_agent.yaml``, as google-adk's loader makes it
    (google.adk.agents.config_agent_utils.from_config)."""
    try:
        from google.adk.agents.config_agent_utils import from_config

        root_agent = from_config(str(config))
    except Exception as e:  # noqa: BLE001 - every failure is the config's
        raise AgentLoadError(
            f"agent {_relative(config.parent, root)}: {_relative(config, root)} failed to "
            f"load: {described(e)}", config, hint="fix the agent config (ADK's agent config "
            "reference: https://google.github.io/adk-docs/agents/config/)",
        ) from e
    return LoadedAgent(app_name=config.parent.name, root_agent=root_agent)


def _relative(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` (POSIX), as given when it is outside."""
    try:
        return path.resolve().relative_to(root).as_posix() or "."
    except ValueError:
        return str(path)


def _raised_at(
    error: BaseException, agent_dir: Path, root: Path,
) -> traceback.FrameSummary | None:
    """Where the repository's code raised ``error``: a SyntaxError's own place, else the
    innermost frame of the repository's code (not installed packages), else the innermost
    inside the agent folder."""
    if isinstance(unwrapped(error), SyntaxError):
        return _frame_raised(error, agent_dir)
    return innermost_user_frame(unwrapped(error), root) or _frame_raised(error, agent_dir)


def _frame_raised(error: BaseException, agent_dir: Path) -> traceback.FrameSummary | None:
    """The innermost traceback frame inside the agent folder (a SyntaxError's own place
    counts), if any."""
    error = unwrapped(error)
    frames = traceback.extract_tb(error.__traceback__)
    if isinstance(error, SyntaxError) and error.filename:
        frames.append(traceback.FrameSummary(error.filename, error.lineno or 0, ""))
    inside = [f for f in frames if f.filename.startswith(str(agent_dir))]
    return inside[-1] if inside else None


def _at(frame: traceback.FrameSummary | None, root: Path) -> str:
    """`` (at backend/my_agent/agent.py:3)`` for ``frame`` (relative to the repository
    root ``root``), or ``""``."""
    if frame is None:
        return ""
    return f" (at {_relative(Path(frame.filename), root)}:{frame.lineno})"


def _place(frame: traceback.FrameSummary | None) -> tuple[Path | None, int | None]:
    """``frame``'s file and line (None, None when there is none; a line 0 is no line)."""
    if frame is None:
        return None, None
    return Path(frame.filename), frame.lineno or None


def agent_tree(root: Any, agent_tools: bool = True) -> Iterator[Any]:
    """The agent tree: ``root``, its sub-agents and (unless ``agent_tools`` is False) agents
    used as tools (``AgentTool``)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        agent = stack.pop()
        if agent is None or id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        stack.extend(getattr(agent, "sub_agents", None) or [])
        for tool in (getattr(agent, "tools", None) or []) if agent_tools else []:
            inner = getattr(tool, "agent", None)
            if inner is not None and hasattr(inner, "sub_agents"):
                stack.append(inner)


def agent_records(root: Any) -> list[AgentRecord] | None:
    """Each agent of the tree of ``root`` (:func:`agent_tree` order) as
    :class:`~adk_eval_action.results.agenttree.AgentRecord`: what ADK's ``AgentDetails``
    leaves out (its model, generate config, sub-agents, tool names). Read before the run
    wraps the models (adk.runtime.model_limits), so a model is its name as written. None
    when an agent of the user's tree cannot be read (a property that raises): the tree is
    then unknown, never half known."""
    try:
        return [_agent_record(agent) for agent in agent_tree(root)]
    except Exception:  # noqa: BLE001 - the user's agent objects: unknown, not a failed run
        return None


def _agent_record(agent: Any) -> AgentRecord:
    config = getattr(agent, "generate_content_config", None)
    dumped = config.model_dump(mode="json", exclude_none=True) if config is not None else None
    if dumped is not None:
        dumped.pop("http_options", None)  # transport, and where headers with keys go
    return AgentRecord(
        name=str(getattr(agent, "name", "")),
        kind=type(agent).__name__,
        model=_model_name(agent),
        instruction_provider=callable(getattr(agent, "instruction", None)),
        generate_config=dumped or None,
        sub_agents=[str(getattr(a, "name", "")) for a in getattr(agent, "sub_agents", None) or []],
        tools=[_tool_name(t) for t in getattr(agent, "tools", None) or []],
    )


def _model_name(agent: Any) -> str | None:
    """The model an ``LlmAgent`` calls: its own, else its nearest ancestor's, else ADK's
    default (``LlmAgent.canonical_model``'s rule; the model is built only for the
    default); None for an agent that calls none, or whose default ADK cannot build."""
    from google.adk.agents import LlmAgent

    if not isinstance(agent, LlmAgent):
        return None
    current: Any = agent
    while current is not None:
        model = getattr(current, "model", None)
        if model:
            return _name_of(model)
        current = getattr(current, "parent_agent", None)
    try:
        return _name_of(agent.canonical_model)
    except Exception:  # noqa: BLE001 - google-adk 1.x has no default model: it raises
        return None


def _name_of(model: Any) -> str:
    """A model's name: the str itself, a ``BaseLlm``'s ``model``, else its class."""
    name = model if isinstance(model, str) else getattr(model, "model", None)
    return str(name) if name else type(model).__name__


def _tool_name(tool: Any) -> str:
    """A tool as the agent declares it: a tool's ``name``, a function's name, else its
    class (a toolset)."""
    name = getattr(tool, "name", None)
    if isinstance(name, str) and name:
        return name
    return str(getattr(tool, "__name__", None) or type(tool).__name__)


def _repo_file(module: ModuleType, repo_root: Path) -> Path | None:
    """The module's source file when it lies in ``repo_root`` outside installed packages
    and virtualenvs, else None."""
    name = getattr(module, "__file__", None)
    if not name:
        return None
    path = Path(name).resolve()
    if not path.is_relative_to(repo_root) or any(
        part in ("site-packages", "dist-packages", ".venv", "venv", ".tox") for part in path.parts
    ):
        return None
    return path


async def imported_files(
    agent_dirs: Iterable[Path], repo_root: Path, modules: Iterable[str] = ()
) -> tuple[set[Path], dict[Path, str]]:
    """What importing the agents reads of the repository: the source files (under
    ``repo_root``, not in installed packages or virtualenvs) of every module in
    ``sys.modules`` once the agents and ``modules`` (custom metric modules) are imported,
    each in an :class:`ImportScope` that is undone after. Agents whose packages share a
    name are imported one after another. Returns the files, and the agent folders that
    failed to import with why (their imports are then not known)."""
    import importlib

    repo_root = Path(repo_root).resolve()
    files: set[Path] = set()
    failed: dict[Path, str] = {}
    pending = [Path(d).resolve() for d in agent_dirs]
    while pending:
        batch: list[Path] = []
        for agent_dir in pending:
            if all(agent_dir.name != other.name for other in batch):
                batch.append(agent_dir)
        pending = [d for d in pending if d not in batch]
        with ImportScope(batch, repo_root):
            for agent_dir in batch:
                try:
                    await load_agent(agent_dir, repo_root)
                except AgentLoadError as e:
                    failed[agent_dir] = str(e)
            for module in modules:
                try:
                    importlib.import_module(module)
                except Exception:  # noqa: BLE001 - a broken metric module is the run's to report
                    continue
            files |= {f for m in list(sys.modules.values()) if (f := _repo_file(m, repo_root))}
    return files, failed
