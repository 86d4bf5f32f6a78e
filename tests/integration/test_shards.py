"""Sharding (run --shard K/N) and merge: the merged parts equal the unsharded run, and
parts that do not make one whole plan are refused by name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.results.io import load_results
from adk_eval_action.results.model import RunResults, ShardInfo
from adk_eval_action.results.shards import MergeError, ShardSpec, assign_shards, merge_parts
from conftest import CliRun, load_json


def _cases(results: dict[str, Any]) -> list[tuple]:
    """Per case and run: status and each metric's score and status (durations left out:
    they are measured)."""
    return [
        (s["name"], e["eval_set_id"], c["eval_id"], r["run"], r["status"],
         [(m["metric_name"], m.get("score"), m["status"], m.get("higher_is_better"))
          for m in r["metrics"] if m["metric_name"] != "invocation_duration_v1"])
        for s in results["suites"] for e in s["eval_sets"] for c in e["eval_cases"]
        for r in c["runs"]
    ]


def test_assign_shards_is_longest_first_to_the_least_loaded() -> None:
    # By hand: 7 -> shard 1 (7, 0, 0); 5 -> 2 (7, 5, 0); 4 -> 3 (7, 5, 4); 4 (position 3)
    # -> 3 (7, 5, 8); 3 -> 2 (7, 8, 8); 1 (position 0) -> 1 (8, 8, 8).
    assert assign_shards([1, 7, 4, 4, 5, 3], 3) == [1, 1, 3, 3, 2, 2]
    assert assign_shards([2, 2, 2], 1) == [1, 1, 1]
    assert assign_shards([], 4) == []


def test_shard_spec() -> None:
    assert ShardSpec.parse(" 2 / 4 ") == ShardSpec(index=2, count=4)
    for bad in ("0/3", "4/3", "2", "a/b"):
        with pytest.raises(ValueError):
            ShardSpec.parse(bad)


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The example agent evaluated whole and in 3 shards (2 runs per case)."""
    from click.testing import CliRunner

    from adk_eval_action.cli import main
    from conftest import copy_examples, working_directory

    root = copy_examples(tmp_path_factory.mktemp("shards") / "repo")
    files = {"full": root / "full.json"}
    with working_directory(root):
        for name, extra in [("full", []), *[(f"part{k}", ["--shard", f"{k}/3"])
                                           for k in (1, 2, 3)]]:
            out = root / f"{name}.json"
            result = CliRunner().invoke(main, [
                "run", "travel_agent", "--num-runs", "2", "--baseline", "none", "--quiet",
                "--results-out", str(out), *extra,
            ], catch_exceptions=False)
            assert result.exit_code == 0, result.output
            files[name] = out
    return files


def test_merged_shards_equal_the_unsharded_run(parts: dict[str, Path], cli: CliRun,
                                               tmp_path: Path) -> None:
    infos = [load_results(parts[f"part{k}"]).shard for k in (1, 2, 3)]
    assert all(isinstance(i, ShardInfo) for i in infos)
    assert len({i.plan_id for i in infos}) == 1
    assert sorted(k for i in infos for k in map(tuple, i.cases)) == sorted(
        map(tuple, infos[0].plan))
    assert all(i.cases for i in infos)  # 5 cases over 3 shards: none is empty
    merged = tmp_path / "merged.json"
    result = cli("merge", *(str(parts[f"part{k}"]) for k in (3, 1, 2)),
                 "--results-out", str(merged))
    assert result.exit_code == 0, result.output
    full, whole = load_json(parts["full"]), load_json(merged)
    assert _cases(whole) == _cases(full)
    assert whole["suites"][0]["errors"] == full["suites"][0]["errors"]
    assert "shard" not in whole
    # Each part counted its own model calls; the merged file counts them all.
    part_calls = sum(load_json(parts[f"part{k}"])["metadata"]["model_calls"]["calls"]
                     for k in (1, 2, 3))
    assert whole["metadata"]["model_calls"]["calls"] == part_calls
    assert part_calls == full["metadata"]["model_calls"]["calls"]
    compared = cli("compare", str(merged), "--baseline", str(parts["full"]))
    assert compared.exit_code == 0, compared.output


def _refusal(parts: list[tuple[str, RunResults]]) -> str:
    with pytest.raises(MergeError) as raised:
        merge_parts(parts)
    return str(raised.value)


def test_merge_refuses_parts_that_do_not_make_one_plan(parts: dict[str, Path]) -> None:
    one, two, three = (load_results(parts[f"part{k}"]) for k in (1, 2, 3))
    assert "shard 2/3 missing" in _refusal([("a.json", one), ("c.json", three)])
    assert "shard 1/3 given twice: a.json and copy.json" in _refusal(
        [("a.json", one), ("copy.json", one), ("b.json", two), ("c.json", three)])
    assert "full.json is not a shard's results" in _refusal(
        [("a.json", one), ("full.json", load_results(parts["full"]))])
    other = three.model_copy(deep=True)
    other.shard.plan_id = "sha256:" + "0" * 64
    assert "parts of different runs" in _refusal([("a.json", one), ("b.json", two),
                                                  ("other.json", other)])
    overlap = three.model_copy(deep=True)
    overlap.shard.cases.append(one.shard.cases[0])
    assert f"eval case {'/'.join(one.shard.cases[0])} is in a.json and in c.json" in _refusal(
        [("a.json", one), ("b.json", two), ("c.json", overlap)])


def test_merge_command_names_a_missing_shard(parts: dict[str, Path], cli: CliRun,
                                             tmp_path: Path) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    for k in (1, 3):
        shutil.copy(parts[f"part{k}"], folder / f"part{k}.json")
    result = cli("merge", str(folder / "*.json"), "--results-out", str(tmp_path / "m.json"))
    assert result.exit_code == 2
    assert "shard 2/3 missing" in result.output
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("second", ["part1.json", "./part1.json", "p*1.json"])
def test_merge_names_a_part_given_twice(parts: dict[str, Path], cli: CliRun, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch, second: str) -> None:
    """The same file named twice (as it is, by another spelling, by a glob) is refused as
    given twice, not as the shards it leaves missing."""
    monkeypatch.chdir(tmp_path)
    for k in (1, 2, 3):
        shutil.copy(parts[f"part{k}"], tmp_path / f"part{k}.json")
    result = cli("merge", "part1.json", second, "part2.json", "part3.json",
                 "--results-out", "m.json")
    assert result.exit_code == 2
    assert "shard 1/3 given twice: part1.json was named twice" in result.output
    assert "missing" not in result.output
    assert not (tmp_path / "m.json").exists()


def test_a_parts_line_says_how_many_of_its_cases_were_evaluated(
    parts: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """A part whose eval cases all errored (the model answered 404) does not read as
    evaluated; one whose cases all ran does."""
    from adk_eval_action.results.model import CaseStatus
    from adk_eval_action.run.stop_outcomes import part_outcome
    from adk_eval_action.settings import load_request

    # The part with the most eval cases (5 in 3 shards: one has 2 at least).
    good = max((load_results(parts[f"part{k}"]) for k in (1, 2, 3)),
               key=lambda r: len(r.shard.cases))
    cases = [c for s in good.suites for e in s.eval_sets for c in e.eval_cases]
    assert len(cases) >= 2
    shard = f"shard {good.shard.index}/3"
    plan = len(good.shard.plan)
    errored = good.model_copy(deep=True)
    for case in (c for s in errored.suites for e in s.eval_sets for c in e.eval_cases):
        for run in case.runs:
            run.status, run.error, run.error_kind = CaseStatus.ERROR, "404", "agent"
    some = good.model_copy(deep=True)
    first = next(c for s in some.suites for e in s.eval_sets for c in e.eval_cases)
    first.runs[0].status = CaseStatus.ERROR
    request = load_request(tmp_path)
    with caplog.at_level("INFO", logger="adk_eval_action"):
        part_outcome(good, request)
        part_outcome(errored, request)
        part_outcome(some, request)
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith(shard)]
    merge = "; merge all parts with `adk-eval-action merge` to compare and gate"
    assert said == [
        f"{shard}: {len(cases)} of the plan's {plan} eval cases, all evaluated{merge}",
        f"{shard}: {len(cases)} of the plan's {plan} eval cases, none of them could be "
        f"evaluated (errors above){merge}",
        f"{shard}: {len(cases)} of the plan's {plan} eval cases, {len(cases) - 1} "
        f"evaluated, 1 could not be (errors above){merge}",
    ]


def test_a_part_says_which_shard_of_which_plan(parts: dict[str, Path]) -> None:
    data = load_json(parts["part2"])
    assert data["shard"]["index"] == 2 and data["shard"]["count"] == 3
    assert data["shard"]["plan_id"].startswith("sha256:")
    evaluated = {tuple(k) for k in data["shard"]["cases"]}
    listed = {(s["name"], e["eval_set_id"], c["eval_id"]) for s in data["suites"]
              for e in s["eval_sets"] for c in e["eval_cases"]}
    assert listed == evaluated
    assert json.dumps(data["shard"]["plan"]) == json.dumps(
        load_json(parts["part1"])["shard"]["plan"])


def test_merge_mode_compares_comments_and_gates_the_merged_parts(
    parts: dict[str, Path], tmp_path: Path
) -> None:
    """The action's merge job: the `merge` input, no evaluation, one comparison."""
    from adk_eval_action.run.pipeline import run_pipeline
    from adk_eval_action.settings import load_request

    root = parts["full"].parent
    request = load_request(root, inputs={
        "merge": "part*.json", "baseline": str(parts["full"]),
        "results_path": str(tmp_path / "merged.json"),
    })
    outcome = run_pipeline(request)
    assert outcome.exit_code == 0 and outcome.shard is None
    assert outcome.comparison is not None and outcome.comparison.has_baseline
    assert all(m.delta in (0, None) for m in outcome.comparison.metrics
               if m.metric_name != "invocation_duration_v1")
    assert _cases(load_json(tmp_path / "merged.json")) == _cases(load_json(parts["full"]))


@pytest.mark.parametrize("fail_on", ["threshold", "any"])
def test_compare_refuses_one_shard_as_the_head(parts: dict[str, Path], cli: CliRun,
                                               fail_on: str) -> None:
    """One part alone would gate green with the other parts' eval cases read as removed."""
    part = load_json(parts["part1"])["shard"]
    result = cli("compare", str(parts["part1"]), "--baseline", str(parts["full"]),
                 "--fail-on", fail_on)
    assert result.exit_code == 2, result.output
    out = " ".join(result.output.split())
    assert (f"{parts['part1']}: results of shard 1/3 ({len(part['cases'])} of the plan's "
            f"{len(part['plan'])} eval cases): merge the shards first (adk-eval-action merge "
            "PART... --results-out merged.json)") in out, out
    assert "passed" not in out


def test_compare_refuses_one_shard_as_the_baseline(parts: dict[str, Path],
                                                   cli: CliRun) -> None:
    result = cli("compare", str(parts["full"]), "--baseline", str(parts["part2"]))
    assert result.exit_code == 2, result.output
    assert "results of shard 2/3" in " ".join(result.output.split())


def test_merge_refuses_parts_of_different_commits(parts: dict[str, Path], cli: CliRun,
                                                  tmp_path: Path) -> None:
    # The plan's id hashes the cases and settings, not the agent's code: parts of two commits
    # share it, and only metadata.git_sha tells them apart.
    one, two, three = (load_results(parts[f"part{k}"]) for k in (1, 2, 3))
    assert one.shard is not None and two.shard is not None
    assert one.shard.plan_id == two.shard.plan_id
    later = two.model_copy(deep=True)
    later.metadata.git_sha = "5a6c85c" + "0" * 33
    message = _refusal([("p1.json", one), ("p2.json", later), ("p3.json", three)])
    assert f"p2.json was recorded at commit {later.metadata.git_sha}" in message
    assert f"p1.json at commit {one.metadata.git_sha or 'unknown'}" in message
    for k in (1, 3):
        shutil.copy(parts[f"part{k}"], tmp_path / f"part{k}.json")
    data = load_json(parts["part2"])
    data["metadata"]["git_sha"] = later.metadata.git_sha
    (tmp_path / "part2.json").write_text(json.dumps(data), encoding="utf-8")
    result = cli("merge", str(tmp_path / "part*.json"), "--results-out", str(tmp_path / "m.json"))
    assert result.exit_code == 2, result.output
    assert "part2.json was recorded at commit 5a6c85c" in result.output
    assert "part1.json at commit" in result.output
    assert not (tmp_path / "m.json").exists()
