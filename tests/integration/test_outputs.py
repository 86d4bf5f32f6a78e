"""The files a command writes (run.outputs, files.write_atomic): compared with each other
and with the files it reads before any work, and a FIFO or a device written through,
never replaced by a regular file."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval_action.cli import main
from conftest import CliRun, SharedRun

RUN = ("run", "travel_agent", "--baseline", "none")


def _no_call(gemini_api, before: int) -> None:
    assert len(gemini_api.calls) == before, "a model was called"


@pytest.mark.parametrize(("flags", "said"), [
    (["--results-out", "r.json", "--html-out", "./x/../r.json"],
     "x/../r.json: the HTML report (--html-out) and the results file (--results-out "
     "r.json) are one file, so one would overwrite the other; give each its own path"),
    (["--summary-out", "s.md", "--comment-out", "s.md"],
     "s.md: the job summary (--summary-out) and the comment (--comment-out s.md) are one "
     "file"),
    (["--comment-out", "adk-eval.yaml"],
     "adk-eval.yaml: the comment (--comment-out) would overwrite the adk-eval.yaml this "
     "command reads; give --comment-out another path"),
    (["--comparison-out", "travel_agent/eval/test_config.json"],
     "travel_agent/eval/test_config.json: the comparison (--comparison-out) would overwrite "
     "the eval config of suite travel_agent this command reads"),
    (["--results-out", "travel_agent/eval/travel.evalset.json"],
     "the results file (--results-out) would overwrite an eval set of suite travel_agent"),
    (["--html-out", "travel_agent"],
     "travel_agent: cannot write the HTML report (--html-out): it is a folder; give the path "
     "of a file"),
    (["--html-out", "README.md/r.html"],
     "README.md/r.html: cannot write the HTML report (--html-out): it is a path under the "
     "file"),
])
def test_run_refuses_outputs_that_clash_before_any_model_call(
    example_repo: Path, gemini_api, flags: list[str], said: str,
) -> None:
    """``run --results-out r.json --html-out r.json`` left only the HTML page in r.json:
    now every output is compared with the others and with the files the run reads, and
    checked to be writable, before anything is evaluated; exit 2 naming the option, and no
    file written or changed (not even the results file recording the error)."""
    (example_repo / "adk-eval.yaml").write_text("num_runs: 1\n")
    before = {p: p.read_bytes() for p in example_repo.rglob("*") if p.is_file()}
    calls = len(gemini_api.calls)
    # Not the cli fixture: it reads a --results-out that is a file as results.
    result = CliRunner().invoke(main, [*RUN, *flags], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert said in result.output
    _no_call(gemini_api, calls)
    after = {p: p.read_bytes() for p in example_repo.rglob("*") if p.is_file()}
    assert after == before, "a file was written or changed"


def test_compare_render_and_merge_refuse_an_output_that_is_an_input(
    good_run: SharedRun, tmp_path: Path, cli: CliRun, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``compare head.json --comparison-out head.json``, ``render head.json --out
    head.json`` and ``merge part.json --results-out part.json`` would overwrite what they
    read: refused, the file as it was."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(good_run.results, "head.json")
    os.chmod("head.json", 0o644)
    before = Path("head.json").read_bytes()
    for args, said in [
        (("compare", "head.json", "--comparison-out", "head.json"),
         "head.json: the comparison (--comparison-out) would overwrite the head's results "
         "file this command reads (HEAD head.json)"),
        (("compare", "head.json", "--baseline", "head.json", "--html-out", "head.json"),
         "the HTML report (--html-out) would overwrite the head's results file"),
        (("render", "head.json", "--out", "head.json"),
         "the rendered comment (--out) would overwrite the head's results file"),
        (("render", "head.json", "--out", "r.md", "--html-out", "r.md"),
         "r.md: the HTML report (--html-out) and the rendered comment (--out r.md) are one "
         "file"),
        (("merge", "head.json", "--results-out", "head.json"),
         "head.json: the merged results file (--results-out) would overwrite a part this "
         "command reads (PARTS head.json)"),
    ]:
        result = cli(*args)
        assert result.exit_code == 2 and said in result.output, (args, result.output)
        assert Path("head.json").read_bytes() == before
        assert not Path("r.md").exists()


def _char_device(path: Path) -> Path:
    """A character device node like /dev/full (1, 7) at ``path``; skips where the process
    may not make one (only root, outside user namespaces that forbid it)."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except PermissionError:
        pytest.skip("mknod is not permitted here")
    return path


def test_a_device_output_is_written_through_and_stays_a_device(
    example_repo: Path, cli: CliRun,
) -> None:
    """``--html-out /dev/full`` as root replaced the device node with a regular file (the
    atomic rename): now it is written through, so the device's own error (no space) is
    the run's exit 2, naming the option, with the results file written; ``/dev/null``
    takes the comparison and the run passes."""
    full = _char_device(example_repo / "full")
    result = cli(*RUN, "--html-out", "full", "--comparison-out", "/dev/null")
    assert result.exit_code == 2, result.output
    assert "no space left on device writing --html-out" in result.output
    assert stat.S_ISCHR(full.stat().st_mode), "the device node was replaced"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert (example_repo / "adk-eval-results.json").is_file()


def test_write_atomic_writes_a_fifo_through_and_refuses_one_nobody_reads(
    tmp_path: Path,
) -> None:
    """A FIFO (a shell's ``>(jq .)``) is written through to its reader, and stays a FIFO;
    with no reader the write is refused at once (ENXIO), not waited on forever. A block
    device, a folder are refused; a file under /dev is never created."""
    import errno

    from adk_eval_action.files import write_atomic

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError) as nobody:
        write_atomic(fifo, "x")
    assert nobody.value.errno == errno.ENXIO and "no process reads" in str(nobody.value)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    while not got and reader.is_alive():
        try:
            write_atomic(fifo, "through the pipe " * 10_000)
            break
        except OSError as e:  # the reader has not opened its end yet
            assert e.errno == errno.ENXIO
    reader.join(10)
    assert got == [("through the pipe " * 10_000).encode()]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path, "x")
    with pytest.raises(FileNotFoundError):
        write_atomic(Path("/dev/adk-eval-not-a-device"), "x")
    assert not os.path.lexists("/dev/adk-eval-not-a-device")
