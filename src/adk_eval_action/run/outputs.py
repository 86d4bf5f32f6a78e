"""The files a command writes, checked before it does any work: no output may be a file
the command reads (adk-eval.yaml, the baseline, the history, the template, a merged part,
an eval set or eval config, the head of ``compare``), nor the file another of its outputs
writes, nor a path no file can be written to (a folder, a block device, a socket, a path
under a file). ``run --results-out r.json --html-out r.json`` left only the HTML page;
``--comment-out adk-eval.yaml`` would replace the config the run read.

Paths are compared once links and ``..`` are resolved (``os.path.realpath``), and as the
same inode when both exist (a hard link). A FIFO or a character device (``/dev/null``,
``/dev/stdout``) is written through (``files.write_atomic``), so two outputs may name
one, and it is never an input here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from adk_eval_action.errors import OutputPathError
from adk_eval_action.files import WRITTEN_THROUGH, expand_glob, output_kind
from adk_eval_action.github.publish import COMMENT_FILE, PR_FILE, PublishTarget
from adk_eval_action.project.discovery import Suite, relative_path
from adk_eval_action.results.history_file import HISTORY_FILE_NAME
from adk_eval_action.settings import OPTIONS, RunRequest

__all__ = ["COMMAND_FILES", "NamedFile", "command_files", "refuse_clashes", "run_files"]

#: What each output option writes, for the messages.
WRITES = {
    "results_path": "the results file",
    "comment_out": "the comment",
    "summary_out": "the job summary",
    "html_out": "the HTML report",
    "comparison_out": "the comparison",
    "history_out": "the history",
}


@dataclass(frozen=True)
class NamedFile:
    """A file of a command: ``path`` as the command opens it (absolute), ``shown`` as
    the user wrote it, ``label`` the option (or input, or argument) that names it, and
    ``what`` it is (``the results file``, ``the baseline``)."""

    path: Path
    shown: str
    label: str
    what: str


def _label(name: str, action: bool) -> str:
    """The option ``name`` as the user gives it: the action's input, else the flag."""
    spec = OPTIONS[name]
    return f"input {spec.name}" if action else spec.flag


def _setting(request: RunRequest, name: str, action: bool, what: str) -> NamedFile | None:
    value = getattr(request.settings, name)
    if value is None:
        return None
    return NamedFile(request.path(value), str(value), _label(name, action), what)


def run_files(
    request: RunRequest, target: PublishTarget | None, suites: list[Suite],
) -> tuple[list[NamedFile], list[NamedFile]]:
    """The outputs and the inputs of ``run`` (the action's when ``target`` is given: its
    results file with the comment, PR context, HTML report and history beside it)."""
    action = target is not None
    outputs = [_setting(request, name, action, what) for name, what in WRITES.items()]
    if target is not None:
        beside = request.path(request.settings.results_path).parent
        shown = f"beside the results file ({_label('results_path', True)})"
        outputs += [NamedFile(beside / name, name, shown, what) for name, what in (
            (COMMENT_FILE, "the comment"), (PR_FILE, "the PR context"),
            (target.report_path.name, "the HTML report"),
            (HISTORY_FILE_NAME, "the history"))]
    inputs = [*_read_files(request, action), *_merged_parts(request, action)]
    for suite in suites:
        config = [suite.eval_config_path] if suite.eval_config_path is not None else []
        inputs += [NamedFile(p, relative_path(p, request.workdir), "",
                             f"{'the eval config' if p in config else 'an eval set'} of suite "
                             f"{suite.name}") for p in [*suite.eval_set_paths, *config]]
    return [o for o in outputs if o is not None], inputs


def _read_files(request: RunRequest, action: bool) -> list[NamedFile]:
    """adk-eval.yaml, the baseline file, the history and the template of ``request``."""
    files = [_setting(request, name, action, what) for name, what in (
        ("history", "the history"), ("template", "the comment template"))]
    if request.config_path is not None:  # given, or found in the working directory
        given = request.settings.config is not None
        files.append(NamedFile(request.config_path, relative_path(request.config_path,
                                                                  request.workdir),
                               _label("config", action) if given else "", "the adk-eval.yaml"))
    path = request.settings.baseline.file
    if path is not None:
        files.append(NamedFile(request.path(path), str(path),
                               _label("baseline", action), "the baseline"))
    return [f for f in files if f is not None]


def _merged_parts(request: RunRequest, action: bool) -> list[NamedFile]:
    label = _label("merge", action)
    return [NamedFile(Path(p), os.path.relpath(p, request.workdir), label, "a merged part")
            for pattern in request.settings.merge
            for p in expand_glob(str(request.workdir / pattern))]


#: What the outputs and inputs of ``compare``, ``render`` and ``merge`` are, by flag or
#: argument.
COMMAND_FILES = {
    "--comment-out": "the comment", "--summary-out": "the job summary",
    "--html-out": "the HTML report", "--comparison-out": "the comparison",
    "--out": "the rendered comment", "--results-out": "the merged results file",
    "HEAD": "the head's results file", "--baseline": "the baseline",
    "--history": "the history", "--template": "the comment template",
    "--config": "the adk-eval.yaml", "PARTS": "a part",
}


def command_files(
    workdir: Path, outputs: Iterable[tuple[str, Path | None]],
    inputs: Iterable[tuple[str, Path | None]],
) -> tuple[list[NamedFile], list[NamedFile]]:
    """The outputs and inputs of ``compare``, ``render`` or ``merge``, each as the flag
    or argument that names it (:data:`COMMAND_FILES`) and its path relative to
    ``workdir`` (None: not given)."""
    def named(files: Iterable[tuple[str, Path | None]]) -> list[NamedFile]:
        return [NamedFile(workdir / path, str(path), label, COMMAND_FILES[label])
                for label, path in files if path is not None]

    return named(outputs), named(inputs)


def refuse_clashes(outputs: list[NamedFile], inputs: list[NamedFile]) -> None:
    """Refuses an output that cannot be written, is an input, or is another output
    (module docstring).

    Raises:
        OutputPathError: naming the output's option and path, and what it clashes with.
    """
    seen: dict[tuple[object, ...], NamedFile] = {}
    for file in inputs:
        seen.setdefault(_identity(file.path), file)
    for output in outputs:
        kind = output_kind(output.path)
        if kind in WRITTEN_THROUGH:
            continue
        if kind is not None or (kind := _blocked_folder(output.path)) is not None:
            raise OutputPathError(output.shown, f"cannot write {output.what} ({output.label}): "
                                  f"it is {kind}; give the path of a file")
        other = seen.get(_identity(output.path))
        if other is not None:
            raise OutputPathError(output.shown, _clash(output, other, other in inputs))
        seen[_identity(output.path)] = output


def _clash(output: NamedFile, other: NamedFile, read: bool) -> str:
    named = f" ({other.label} {other.shown})" if other.label else ""
    if read:
        return (f"{output.what} ({output.label}) would overwrite {other.what} this command "
                f"reads{named}; give {output.label} another path")
    return (f"{output.what} ({output.label}) and {other.what}{named} are one file, so one "
            "would overwrite the other; give each its own path")


def _identity(path: Path) -> tuple[object, ...]:
    """The file ``path`` names: its device and inode when it exists (a hard link is the
    same file), else its path with links and ``..`` resolved."""
    try:
        found = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    return ("inode", found.st_dev, found.st_ino)


def _blocked_folder(path: Path) -> str | None:
    """Why ``path``'s folder cannot be made: the nearest of its parents that exists is
    not a folder (``--html-out r.json/x.html`` beside a file ``r.json``)."""
    for parent in Path(os.path.abspath(path)).parents:
        if os.path.lexists(parent):
            if os.path.isdir(parent):
                return None
            return f"a path under the file {parent}"
    return None
