"""Reading files that come from a repository (untrusted): bounded in size, regular files
only, YAML without alias bombs, paths that stay inside the repository root, and glob
patterns whose ``**`` walk is bounded and follows no link to a folder. And writing the
run's own files whole or not at all (:func:`write_atomic`).

Every read of a repository file (adk-eval.yaml, eval configs, eval sets, templates, results
and baseline files, the event payload) goes through :func:`read_bytes` or
:func:`read_text`: a symlink to ``/dev/zero`` or a FIFO is refused before anything is
read, and a file above its limit is refused by name instead of filling memory.
"""

from __future__ import annotations

import errno
import glob
import os
import stat
import uuid
from pathlib import Path
from typing import Any

import yaml

from adk_eval_action.errors import AdkEvalActionError

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_GLOB_FOLDERS",
    "MAX_DATA_BYTES",
    "MAX_YAML_NODES",
    "WRITTEN_THROUGH",
    "FileLimitError",
    "OutsideRoot",
    "expand_glob",
    "inside_root",
    "read_head",
    "load_yaml",
    "output_kind",
    "read_bytes",
    "read_text",
    "write_atomic",
]

#: adk-eval.yaml, eval configs, templates, requirements files: far below this in practice.
MAX_CONFIG_BYTES = 1024 * 1024
#: Eval sets and results files (a 10,000-case results file with 3 runs is ~150 MB).
MAX_DATA_BYTES = 256 * 1024 * 1024
#: Nodes a YAML document may expand to once its aliases are followed (a "billion laughs"
#: file of 1 KB expands to 10^9): far above any real config.
MAX_YAML_NODES = 100_000
#: Folders one ``**`` of a glob pattern may walk: a repository's tree, without the links
#: to folders it does not follow, is far smaller.
MAX_GLOB_FOLDERS = 100_000


class FileLimitError(AdkEvalActionError):
    """A file is not a regular file, or larger than its limit; ``str()`` names it (exit 2)."""


class OutsideRoot(AdkEvalActionError):
    """A path from the repository or the inputs resolves outside the repository root
    (``..``, an absolute path, a symlink out); ``str()`` names it (exit 2)."""


def read_bytes(path: Path, limit: int = MAX_CONFIG_BYTES) -> bytes:
    """The bytes of ``path`` when it is a regular file (after following symlinks) of at
    most ``limit`` bytes.

    Raises:
        FileLimitError: a device, FIFO, socket or folder; or larger than ``limit``.
        OSError: it cannot be opened or read.
    """
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise FileLimitError(f"{path}: not a regular file")
    if info.st_size > limit:
        raise FileLimitError(f"{path}: {info.st_size:,} bytes, above the limit of {limit:,}")
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)  # a file that grows while read is still bounded
    if len(data) > limit:
        raise FileLimitError(f"{path}: above the limit of {limit:,} bytes")
    return data


def read_head(path: Path, limit: int) -> bytes:
    """The first ``limit`` bytes of ``path`` when it is a regular file (after following
    symlinks), however large it is: what a check of a file's kind by its content reads.

    Raises:
        FileLimitError: a device, FIFO, socket or folder.
        OSError: it cannot be opened or read.
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise FileLimitError(f"{path}: not a regular file")
    with open(path, "rb") as handle:
        return handle.read(limit)


def read_text(path: Path, limit: int = MAX_CONFIG_BYTES, errors: str = "strict") -> str:
    """:func:`read_bytes` decoded as UTF-8 (a BOM is dropped).

    Raises:
        FileLimitError, OSError: as :func:`read_bytes`.
        UnicodeDecodeError: not UTF-8 (with ``errors="strict"``).
    """
    return read_bytes(path, limit).decode("utf-8-sig", errors)


def _expanded_size(node: yaml.Node, limit: int, memo: dict[int, int]) -> int:
    """Nodes of ``node`` with every alias followed (an alias is the same node object
    again, so memoizing by identity keeps this linear in the document)."""
    known = memo.get(id(node))
    if known is not None:
        return known
    size = 1
    if isinstance(node, yaml.SequenceNode):
        children: list[yaml.Node] = list(node.value)
    elif isinstance(node, yaml.MappingNode):
        children = [part for pair in node.value for part in pair]
    else:
        children = []
    for child in children:
        size += _expanded_size(child, limit, memo)
        if size > limit:
            break
    memo[id(node)] = size
    return size


def load_yaml(text: str, max_nodes: int = MAX_YAML_NODES) -> Any:
    """``yaml.safe_load(text)`` (with libyaml when PyYAML has it), refusing a document
    that expands to more than ``max_nodes`` nodes once its aliases (and merge keys) are
    followed.

    Raises:
        yaml.YAMLError: not valid YAML, or it expands past ``max_nodes`` (the message says
            so); RecursionError is reported as a YAMLError too.
    """
    # libyaml's parser where PyYAML has it (the same nodes, ~10x faster: a 450 KB
    # adk-eval.yaml of 5,000 suites took 2 s in the pure-Python one).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded_size(node, max_nodes, {})
        if size > max_nodes:
            raise yaml.YAMLError(
                f"the document expands to more than {max_nodes:,} nodes once its aliases "
                "are followed (an alias bomb?)")
        return loader.construct_document(node)
    except RecursionError as e:
        raise yaml.YAMLError("nested too deeply") from e
    finally:
        loader.dispose()


def yaml_node(value: Any) -> str:
    """``value`` (a string, number, or list of them) as one YAML flow node written by the
    YAML library: plain where YAML reads it back the same, else quoted and escaped (a
    ``,`` or ``]`` in a flow sequence, a ``#`` or ``: `` anywhere); a line break or control
    character double-quoted and escaped, so the node stays on one line at any indentation.
    For files written from repository data (``init``), never pasted in as text."""
    items = value if isinstance(value, list) else [value]
    escaped = any(isinstance(v, str) and not v.isprintable() for v in items)
    text = yaml.safe_dump(value, default_flow_style=True, width=float("inf"),
                          allow_unicode=True, default_style='"' if escaped else None)
    return text.strip().removesuffix("...").strip()


def inside_root(path: Path, root: Path, what: str) -> Path:
    """``path`` (relative to the current folder when not absolute) resolved, when it lies
    inside ``root`` (resolved); symlinks are followed, so a link out of the repository is
    refused too (named where it is, relative to ``root``, and where it points).

    Raises:
        OutsideRoot: it resolves outside ``root`` (names ``what`` and the path).
    """
    resolved = path.resolve()
    base = root.resolve()
    if resolved != base and base not in resolved.parents:
        absolute = Path(os.path.abspath(path))
        link = "" if resolved == absolute else f" (a link to {resolved})"
        try:  # a link inside the repository: named as the user sees it there
            shown = absolute.relative_to(base).as_posix()
        except ValueError:
            shown = str(path)
        raise OutsideRoot(
            f"{what} {shown}{link} is outside the repository root {base}: only files inside "
            "the repository are read")
    return resolved


def expand_glob(pattern: str, limit: int = MAX_GLOB_FOLDERS) -> list[str]:
    """The paths ``pattern`` matches, as ``glob.glob(pattern, recursive=True)`` gives them
    (sorted), except that a ``**`` does not follow symbolic links to folders (as
    ``os.walk`` and ``pathlib.Path.glob`` do not): two ``..`` links would make glob's walk
    exponential in the depth. A link to a folder is still matched where the pattern names
    its level without ``**``.

    Raises:
        FileLimitError: the ``**`` of the pattern walked more than ``limit`` folders in
            all (names the pattern).
    """
    return sorted(_expand(pattern, limit, [0], pattern))


def _expand(pattern: str, limit: int, walked: list[int], shown: str) -> set[str]:
    parts = pattern.split(os.sep)
    if "**" not in parts:
        return set(glob.glob(pattern))
    cut = parts.index("**")
    head, tail = os.sep.join(parts[:cut]) or os.sep, os.sep.join(parts[cut + 1:])
    found: set[str] = set()
    for top in glob.glob(head) if glob.has_magic(head) else [head]:
        for folder, files in _walk(top, limit, walked, shown):
            if tail:
                found |= _expand(os.path.join(folder, tail), limit, walked, shown)
            else:  # a last ``**``: every file and folder under ``top``
                found |= {folder, *(os.path.join(folder, f) for f in files)}
    return found


def _walk(top: str, limit: int, walked: list[int], shown: str) -> list[tuple[str, list[str]]]:
    """``top`` and the folders under it with their files (hidden ones left out, as glob's
    ``**`` does), without entering links to folders; ``walked[0]`` counts the folders of
    the whole pattern."""
    if not os.path.isdir(top):
        return []
    folders = []
    for root, dirs, files in os.walk(top):  # followlinks=False
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        folders.append((root, [f for f in files if not f.startswith(".")]))
        walked[0] += 1
        if walked[0] > limit:
            raise FileLimitError(f"glob {shown!r}: its ** walks more than {limit:,} folders; "
                                 "name a narrower pattern")
    return folders


def output_kind(path: Path) -> str | None:
    """What ``path`` (followed through links) is when :func:`write_atomic` would not
    replace it: ``"a FIFO"`` or ``"a character device"`` (written through: ``/dev/null``,
    ``/dev/stdout``, a shell's ``>(...)``), ``"a folder"``, ``"a block device"`` or ``"a
    socket"`` (refused); None for a regular file or no file (replaced or created)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # no file (or a link to none): created
        return None
    kinds = ((stat.S_ISREG, None), (stat.S_ISFIFO, "a FIFO"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISDIR, "a folder"),
             (stat.S_ISBLK, "a block device"))
    return next((kind for test, kind in kinds if test(mode)), "a socket")


#: What :func:`write_atomic` writes into as it is, never replacing it.
WRITTEN_THROUGH = ("a FIFO", "a character device")


def write_atomic(path: Path, text: str) -> None:
    """Writes ``text`` (UTF-8) to ``path`` whole or not at all: into a new file beside it,
    renamed over ``path`` once written (``os.replace``, atomic on POSIX), so a full disk or
    a stop never leaves a cut file, and an earlier file stays until the new one is whole.
    Parent folders are created; the file gets the mode ``open`` would give (0666 less the
    umask), so the runner's later steps can read what a container wrote.

    A FIFO or a character device (:func:`output_kind`) is written through, never replaced
    by a regular file (as root, the rename would replace ``/dev/full``'s device node); a
    FIFO that no process reads is refused rather than waited on. So is a file named under
    ``/dev`` or ``/proc`` (``/dev/stdout`` redirected to a file is a link to it through
    ``/proc``: the link is the system's). A folder, a block device or a socket is refused.

    Raises:
        OSError: the file (or its folder) cannot be written; nothing is left behind (a
            device's own error, ENOSPC for ``/dev/full``, as it is).
    """
    kind = output_kind(path)
    if kind in WRITTEN_THROUGH or (kind is None and _system_file(path)):
        _write_through(path, text.encode("utf-8"))
        return
    if kind is not None:
        raise OSError(errno.EISDIR if kind == "a folder" else errno.EINVAL,
                      f"it is {kind}, not a file")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(text.encode("utf-8"))
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _system_file(path: Path) -> bool:
    """Whether ``path`` is named under ``/dev`` or ``/proc`` (absolute, as given)."""
    parts = Path(os.path.abspath(path)).parts
    return len(parts) > 2 and parts[1] in ("dev", "proc")


def _write_through(path: Path, data: bytes) -> None:
    """Writes ``data`` into the FIFO or device ``path`` as it is (opened without
    creating or truncating). The FIFO is opened without waiting: with no reader,
    ``open`` fails with ENXIO instead of blocking the run."""
    try:
        handle = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "it is a FIFO that no process reads") from e
        raise
    os.set_blocking(handle, True)  # a reader slower than the writer is waited for
    with os.fdopen(handle, "wb") as stream:
        stream.write(data)
