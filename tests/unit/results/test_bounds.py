"""The small rules under the hostile-input promises (issue 12), each against an independent
source: yaml.safe_load, json, the file system, a rule applied by hand."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from adk_eval_action.files import (
    FileLimitError,
    OutsideRoot,
    expand_glob,
    inside_root,
    load_yaml,
    read_bytes,
    write_atomic,
)
from adk_eval_action.github.event import EventContext, EventContextError
from adk_eval_action.github.sticky import (
    comment_marker,
    compose_comment_body,
    is_marked,
    strip_markers,
)
from adk_eval_action.redaction import REDACTED, Redactor, secret_values
from adk_eval_action.text import fit, without_surrogates


@given(st.text(max_size=300), st.integers(min_value=0, max_value=200))
def test_fit_never_exceeds_the_limit_and_keeps_whole_lines(text: str, limit: int) -> None:
    note = "\n[cut]\n"
    out = fit(text, limit, note)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text
    elif out:
        kept = out[: -len(note)]
        assert out.endswith(note) and text.startswith(kept)
        assert "\n" not in text[:limit - len(note)] or kept.endswith("\n")


def test_fit_in_bytes_never_splits_a_character() -> None:
    text = "é" * 100
    out = fit(text, 51, "", unit="bytes")
    assert len(out.encode("utf-8")) <= 51 and set(out) == {"é"}


def test_surrogates_become_replacement_characters() -> None:
    assert without_surrogates("a\ud800b\udcffc") == "a\ufffdb\ufffdc"
    assert "a\ud800".encode("utf-8", "surrogatepass")  # unwritable as plain UTF-8


@pytest.mark.parametrize("text", [
    "a: 1\nb: [x, y]\n",
    "base: &b {k: 1}\nother:\n  <<: *b\n  j: 2\n",
    "list: &l [1, 2]\nagain: *l\n",
    "",
])
def test_load_yaml_reads_what_safe_load_reads(text: str) -> None:
    assert load_yaml(text) == yaml.safe_load(text)


def test_load_yaml_refuses_an_alias_bomb_that_safe_load_would_expand() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{c}: &{c} [{', '.join(['*' + p] * 10)}]" for p, c in zip("abcde", "bcdef",
                                                                             strict=True)]
    text = "\n".join(lines)
    assert len(yaml.safe_load(text)["c"]) == 10  # shared references: cheap to load...
    with pytest.raises(yaml.YAMLError, match="alias"):  # ...10**6 nodes once expanded
        load_yaml(text)


def test_read_bytes_refuses_devices_fifos_and_large_files(tmp_path: Path) -> None:
    with pytest.raises(FileLimitError, match="not a regular file"):
        read_bytes(Path("/dev/zero"))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(FileLimitError, match="not a regular file"):
        read_bytes(fifo)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    with pytest.raises(FileLimitError, match="11 bytes"):
        read_bytes(big, limit=10)
    assert read_bytes(big, limit=11) == b"x" * 11


def test_inside_root_follows_symlinks(tmp_path: Path) -> None:
    root, outside = tmp_path / "repo", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "x.json").write_text("{}")
    (root / "link.json").symlink_to(outside / "x.json")
    (root / "ok.json").write_text("{}")
    assert inside_root(root / "ok.json", root, "eval set") == (root / "ok.json").resolve()
    for path in (root / "link.json", root / ".." / "outside" / "x.json", Path("/etc/passwd")):
        with pytest.raises(OutsideRoot, match="outside the repository root"):
            inside_root(path, root, "eval set")


def _tree(root: Path) -> None:
    for folder in ("agents/a/eval", "agents/b/eval/deep", "agents/.hidden", "other"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for file in ("agents/a/eval/x.evalset.json", "agents/b/eval/deep/y.evalset.json",
                 "agents/.hidden/z.evalset.json", "agents/top.evalset.json",
                 "agents/b/eval/notes.md", "other/w.evalset.json"):
        (root / file).write_text("{}")


@pytest.mark.parametrize("pattern", [
    "agents/**/*.evalset.json", "**/*.evalset.json", "agents/**", "agents/*/eval/*.json",
    "agents/**/eval/**/*.json", "*/b/**/*.json", "agents/a/eval/x.evalset.json", "nope/**",
])
def test_expand_glob_matches_what_glob_matches_without_links(tmp_path: Path, pattern: str,
                                                             monkeypatch) -> None:
    """In a tree without links to folders, the same paths as ``glob.glob(recursive=True)``
    (which names the folder before a last ``**`` with a slash, and names it even when it
    does not exist)."""
    import glob

    _tree(tmp_path)
    full = str(tmp_path / pattern)
    expected = sorted({os.path.normpath(p) for p in glob.glob(full, recursive=True)
                       if os.path.exists(p)})
    assert expand_glob(full) == expected


def test_expand_glob_does_not_follow_links_to_folders_under_a_double_star(
        tmp_path: Path) -> None:
    """Two ``..`` links: glob's walk is exponential in the depth (2^n paths until the
    path length limit); ``**`` here enters no link, a level named without it still does."""
    _tree(tmp_path)
    os.symlink("..", tmp_path / "agents" / "a" / "up")
    os.symlink("../..", tmp_path / "agents" / "b" / "eval" / "up2")
    found = expand_glob(str(tmp_path / "agents/**/*.evalset.json"))
    assert [Path(p).relative_to(tmp_path).as_posix() for p in found] == [
        "agents/a/eval/x.evalset.json", "agents/b/eval/deep/y.evalset.json",
        "agents/top.evalset.json"]
    through = expand_glob(str(tmp_path / "agents/a/up/a/eval/*.json"))
    assert [Path(p).name for p in through] == ["x.evalset.json"]


def test_expand_glob_bounds_its_walk(tmp_path: Path) -> None:
    _tree(tmp_path)
    with pytest.raises(FileLimitError, match=r"\*\* walks more than 3 folders"):
        expand_glob(str(tmp_path / "**/*.json"), limit=3)


def test_write_atomic_on_a_full_disk_leaves_the_earlier_file_whole(tmp_path: Path) -> None:
    """On a real full file system (a tmpfs): the write fails with ENOSPC, the earlier file
    is as it was, and no temporary file is left."""
    import errno

    from support.small_disk import small_disk

    with small_disk(tmp_path / "disk", free_bytes=8192) as disk:
        target = disk / "results.json"
        write_atomic(target, '{"earlier": true}\n')
        with pytest.raises(OSError) as info:
            write_atomic(target, json.dumps({"big": "x" * 100_000}))
        assert info.value.errno == errno.ENOSPC
        assert json.loads(target.read_text()) == {"earlier": True}
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "results.json"]


def test_write_atomic_gives_the_mode_open_gives(tmp_path: Path) -> None:
    write_atomic(tmp_path / "a" / "new.md", "x")
    (tmp_path / "plain.md").write_text("x")
    assert (tmp_path / "a" / "new.md").stat().st_mode == (tmp_path / "plain.md").stat().st_mode


def test_secret_values_by_name_and_length() -> None:
    env = {"GOOGLE_API_KEY": "AIza-0123456789", "DB_PASSWORD": "p4ssw0rd-long",
           "SORT_KEY": "name", "HOME": "/root/very/long/path", "MY_TOKEN": "tok-123456"}
    assert set(secret_values(env, ["ghs_token12345"])) == {
        "AIza-0123456789", "p4ssw0rd-long", "tok-123456", "ghs_token12345"}


def test_redactor_redacts_the_json_escaped_form_too() -> None:
    secret = 'abc"def\\ghi-0123'
    redact = Redactor([secret])
    text = json.dumps({"said": f"the key is {secret}!"})
    assert secret not in json.loads(redact(text))["said"]
    assert json.loads(redact(text))["said"] == f"the key is {REDACTED}!"
    assert Redactor(["short"])("short") == "short"  # below the minimum length
    assert "hidden-value-1" not in repr(Redactor(["hidden-value-1"]))


def test_our_comment_is_the_one_whose_last_line_is_our_marker() -> None:
    marker = comment_marker("default")
    quoted = f"Another workflow quotes {marker} here.\n<!-- theirs -->\n"
    assert not is_marked(quoted, marker)
    body = compose_comment_body(f"report `{comment_marker('other')}` text", marker)
    assert is_marked(body, marker) and not is_marked(body, comment_marker("other"))
    assert comment_marker("other") not in body


def test_marker_text_is_removed_until_none_is_left() -> None:
    """Removing the inner marker of ``<!-- adk-eval-<!-- … -->action:other -->`` joins
    the text around it into the ``other`` key's marker; a single pass left it there."""
    joined = "a <!-- adk-eval-<!-- adk-eval-action -->action:other --> b"
    assert re.sub(r"<!--\s*adk-eval-action.*?-->", "", joined) == f"a {comment_marker('other')} b"
    assert strip_markers(joined) == "a  b"
    body = compose_comment_body(f"{joined}\n{joined}", comment_marker())
    assert "adk-eval-action:other" not in body and is_marked(body, comment_marker())


@pytest.mark.parametrize(("event_name", "payload", "says"), [
    ("pull_request", {"number": "7abc"}, "not a pull request number"),
    ("pull_request", {"number": True}, "not a pull request number"),
    # str.isdigit() takes a superscript two, which int() refuses (ValueError, exit 1).
    ("pull_request", {"number": "\u00b2"}, "not a pull request number: '\u00b2'"),
    # int() refuses more than 4,300 digits (ValueError, exit 1).
    ("pull_request", {"number": "9" * 5000}, "not a pull request number"),
    ("pull_request", {"number": " 12 ", "pull_request": {"number": 12}}, None),
    ("pull_request", {"pull_request": "x"}, "pull_request is not an object"),
    ("pull_request", {"pull_request": {"head": []}}, "pull_request.head is not an object"),
    ("pull_request", {"pull_request": {"number": 3, "user": "x"}},
     "pull_request.user is not an object"),
    ("push", {"repository": "agents"}, "repository is not an object"),
    ("push", {"sender": ["octocat"]}, "sender is not an object"),
    ("workflow_run", {"workflow_run": {"pull_requests": "12"}},
     "workflow_run.pull_requests is not a list"),
    ("workflow_run", {"workflow_run": {"pull_requests": [{"number": 4}, {"number": "x"}]}},
     r"workflow_run.pull_requests\[1\].number is not a pull request number"),
])
def test_event_fields_of_the_wrong_type_are_named(tmp_path: Path, event_name: str,
                                                  payload: dict, says: str | None) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    env = {"GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(event)}
    if says is None:
        assert EventContext.from_env(env).pr_number == 12
        return
    with pytest.raises(EventContextError, match=says):
        EventContext.from_env(env)


def test_event_fields_other_modules_read_are_parsed_once(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({
        "number": 7, "sender": {"login": "someone"},
        "repository": {"full_name": "octo/agents", "default_branch": "trunk"},
        "pull_request": {"number": 7, "user": {"login": "dependabot[bot]"},
                         "head": {"repo": {"full_name": "fork/agents"}},
                         "base": {"repo": {"full_name": "octo/agents"}}}}))
    ctx = EventContext.from_env({"GITHUB_EVENT_NAME": "pull_request",
                                 "GITHUB_EVENT_PATH": str(event)})
    assert (ctx.default_branch, ctx.author, ctx.head_repository, ctx.is_fork) == (
        "trunk", "dependabot[bot]", "fork/agents", True)
    event.write_text(json.dumps({"workflow_run": {"pull_requests": [
        {"number": 4, "base": {"ref": "main"}}, {"number": 9}]}}))
    ctx = EventContext.from_env({"GITHUB_EVENT_NAME": "workflow_run",
                                 "GITHUB_EVENT_PATH": str(event)})
    assert (ctx.pr_number, ctx.listed_pulls, ctx.base_ref) == (4, (4, 9), "main")
