"""`adk-eval-action init` (run/init.py, project/scaffold.py): the adk-eval.yaml it writes
names the suites discovery finds, so `run`/`plan` with it find the same suites; the workflow
passes actionlint and is README's; an existing file is never overwritten."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from adk_eval_action.project.config import load_project_config
from adk_eval_action.project.discovery import Suite, discover_suites, suites_from_config
from adk_eval_action.project.scaffold import SuiteEntry, eval_set_patterns, project_config_text
from adk_eval_action.project.workflow import WorkflowSpec, workflow_text
from conftest import CliRun, copy_examples
from repo.test_workflows import lint, node  # noqa: F401 - the fixture
from support.layouts import adk_python, starter_pack

README = Path(__file__).resolve().parents[2] / "README.md"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=root, check=True,
                   capture_output=True)


def _same_suites(root: Path) -> list[Suite]:
    """The suites of the written adk-eval.yaml, checked to be discovery's: names, agents,
    eval sets and eval configs."""
    path = root / "adk-eval.yaml"
    written = suites_from_config(load_project_config(path), path)
    found = discover_suites([root], root)

    def shape(s: Suite) -> tuple:
        config = s.eval_config_path.resolve() if s.eval_config_path else None
        return (s.name, s.agent_dir.resolve() if s.agent_dir else None,
                [p.resolve() for p in s.eval_set_paths], config)

    assert [shape(s) for s in written] == [shape(s) for s in found if s.agent_dir]
    return written


def test_init_on_the_starter_pack_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun, node: str  # noqa: F811
) -> None:
    root = starter_pack(tmp_path / "repo")
    (root / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "0.1.0"\n')
    _git(root, "init", "-q", "-b", "trunk")
    # The remote's default branch, as a clone of it records it.
    _git(root, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    monkeypatch.chdir(root)
    result = cli("init")
    assert result.exit_code == 0, result.output
    assert "wrote adk-eval.yaml" in result.output
    assert "wrote .github/workflows/adk-eval.yml" in result.output
    config = yaml.safe_load((root / "adk-eval.yaml").read_text())
    # The regression gate, and the fewest runs with which it calls one eval case that
    # collapses (1 gated test: a call needs p <= 0.0476, 1/C(6, 3) = 0.05 and 1/C(8, 4) = 0.0143).
    assert config == {
        "num_runs": 4, "gate": {"fail_on": "any", "require_significance": True}, "suites": [{
            "name": "app", "agent": "app", "eval_sets": ["tests/eval/evalsets/*.evalset.json"],
            "eval_config": "tests/eval/eval_config.json"}]}
    (suite,) = _same_suites(root)
    assert suite.eval_config_path == (root / "tests/eval/eval_config.json").resolve()
    workflow = yaml.safe_load((root / ".github/workflows/adk-eval.yml").read_text())
    assert workflow[True] == {"pull_request": None, "push": {"branches": ["trunk"]}}
    (evaluate,) = [s for s in workflow["jobs"]["eval"]["steps"] if s.get("id") == "eval"]
    assert evaluate["with"] == {"requirements": "pyproject.toml"}
    done = lint(node, root / ".github/workflows/adk-eval.yml")
    assert done.returncode == 0 and "0 problem(s)" in done.stdout, done.stdout + done.stderr
    # `plan` with the written file finds the same suite, with the same eval config.
    planned = cli("plan")
    assert planned.exit_code == 0, planned.output
    assert "config: adk-eval.yaml" in planned.output
    assert re.search(r"^suite app: 1 eval set\(s\), 2 eval case\(s\) x 4 run\(s\)",
                     planned.output, re.M)
    # `plan` and `init` agree: what init wrote beside num_runs is plan's line.
    (line,) = re.findall(r"^  can call \(each of its 1 gated metric, against its baseline\): "
                         r"(.*)$", planned.output, re.M)
    assert line.endswith("one case collapsing from all-pass to all-fail would be called "
                         "(p = 0.0143)"), line
    assert f"app: {line}" in " ".join(
        c.strip("# ") for c in (root / "adk-eval.yaml").read_text().splitlines())
    assert "metrics: rubric_based_final_response_quality_v1" in planned.output


def test_init_on_the_bundled_example_in_a_subfolder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun, node: str  # noqa: F811
) -> None:
    """examples/ as a folder of a repository: adk-eval.yaml in it, the workflow at the
    repository's root, run in that folder, uploading the files written there."""
    # Not pushed yet (no origin/HEAD), on a branch git's own default names `master`.
    _git(tmp_path, "init", "-q", "-b", "master")
    root = copy_examples(tmp_path / "examples")
    monkeypatch.chdir(root)
    result = cli("init", "--num-runs", "3")
    assert result.exit_code == 0, result.output
    assert "wrote ../.github/workflows/adk-eval.yml" in result.output
    assert ("default branch: master (no origin/HEAD: the branch checked out); edit "
            "`branches:` in the workflow if the default branch is another") in result.output
    assert yaml.safe_load((root / "adk-eval.yaml").read_text()) == {
        "num_runs": 3, "gate": {"fail_on": "any", "require_significance": True}, "suites": [{
        "name": "travel_agent", "agent": "travel_agent",
        "eval_sets": ["travel_agent/eval/*.evalset.json", "travel_agent/eval/*.test.json"],
        "eval_config": "travel_agent/eval/test_config.json"}]}
    (suite,) = _same_suites(root)
    assert [p.name for p in suite.eval_set_paths] == [
        "legacy_weather.test.json", "travel.evalset.json"]
    path = tmp_path / ".github/workflows/adk-eval.yml"
    workflow = yaml.safe_load(path.read_text())
    assert workflow[True]["push"] == {"branches": ["master"]}
    steps = workflow["jobs"]["eval"]["steps"]
    assert steps[1]["with"] == {"working_directory": "examples"}
    assert steps[2]["with"]["path"].split() == [
        "examples/adk-eval-results.json", "examples/adk-eval-comment.md",
        "examples/adk-eval-pr.json", "examples/adk-eval-history.json"]
    done = lint(node, path)
    assert done.returncode == 0 and "0 problem(s)" in done.stdout, done.stdout + done.stderr
    planned = cli("plan")
    assert planned.exit_code == 0, planned.output
    assert re.search(r"^suite travel_agent: 2 eval set\(s\), 5 eval case\(s\) x 3 run\(s\)",
                     planned.output, re.M)
    # --num-runs 3 is written as asked, with what it cannot call, as plan says it.
    assert ("suite travel_agent can call: 5 paired cases x 3 runs a side: the smallest "
            "possible p is 3.13e-07; a call needs p ≤ 0.00952 with the run's 5 gated tests "
            "(every suite's; more with rubrics); one case collapsing from all-pass to "
            "all-fail would not be called (p = 0.05); 5 runs would call it") in result.output
    assert "5 runs would call it" in planned.output


def test_init_never_overwrites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               cli: CliRun) -> None:
    root = starter_pack(tmp_path)
    monkeypatch.chdir(root)
    (root / ".github/workflows").mkdir(parents=True)
    mine = root / ".github/workflows/adk-eval.yml"
    mine.write_text("# my own workflow\n")
    first = cli("init")
    assert first.exit_code == 0, first.output
    assert ("warning: .github/workflows/adk-eval.yml exists: left as it is (init never "
            "overwrites a file; move it away to have it written)") in first.output
    assert mine.read_text() == "# my own workflow\n"
    written = (root / "adk-eval.yaml").read_text()
    second = cli("init", "--num-runs", "5")
    assert second.exit_code == 2, second.output
    assert "warning: adk-eval.yaml exists: left as it is" in second.output
    assert ("error: nothing written: adk-eval.yaml, .github/workflows/adk-eval.yml"
            in second.output)
    assert (root / "adk-eval.yaml").read_text() == written


def test_suites_without_an_eval_case_are_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 cli: CliRun) -> None:
    """An eval set with no agent and no eval case gives nothing to write (one with eval
    cases is written with its agent to fill in: tests/integration/test_community.py)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.evalset.json").write_text('{"eval_set_id": "x", "eval_cases": []}')
    monkeypatch.chdir(tmp_path)
    result = cli("init")
    assert result.exit_code == 2, result.output
    assert "warning: suite data left out: none of its eval sets holds an eval case" in result.output
    assert "no eval sets with an eval case found" in result.output
    assert not (tmp_path / "adk-eval.yaml").exists()
    assert not (tmp_path / ".github").exists()


def test_three_suites_of_one_agent_and_their_short_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun
) -> None:
    adk_python(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert cli("init").exit_code == 0
    names = [s.name for s in _same_suites(tmp_path)]
    assert names == ["home_automation_agent",
                     "home_automation_agent:test_files/memorizing_past_events",
                     "home_automation_agent:test_files"]


def test_names_and_paths_yaml_would_misread_are_quoted(tmp_path: Path) -> None:
    """A suite name or path with `: `, `#`, quotes, a leading `*` or a line break is
    written so that YAML reads back the same string."""
    odd = ["a: b", "c #d", "'q'", '"dq"', "*star", "line\nbreak", "[x]", "yes", "1.5", " pad"]
    entries = [SuiteEntry(name=o, agent=f"{o}/agent", eval_sets=[f"{o}/*.test.json"],
                          eval_config=f"{o}/test_config.json") for o in odd]
    # The names are in the comments on what the runs can call too: a line break stays in it.
    text = project_config_text(entries, 1, can_call={o: "can call nothing" for o in odd},
                               sized=True)
    data = yaml.safe_load(text)
    assert [(s["name"], s["agent"], s["eval_sets"], s["eval_config"]) for s in data["suites"]] \
        == [(o, f"{o}/agent", [f"{o}/*.test.json"], f"{o}/test_config.json") for o in odd]
    assert (data["num_runs"], data["gate"]) == (1, {"fail_on": "any", "require_significance": True})
    assert "#   line\\x0abreak: can call nothing" in text


def test_eval_set_patterns_name_exactly_the_suites_files(tmp_path: Path) -> None:
    for name in ("a.evalset.json", "b.evalset.json", "c.test.json", "d.test.json"):
        (tmp_path / "x").mkdir(exist_ok=True)
        (tmp_path / "x" / name).write_text("{}")
    files = [tmp_path / "x" / n for n in ("a.evalset.json", "b.evalset.json", "c.test.json")]
    # The folder's .test.json glob would also take d.test.json: c is named alone.
    assert eval_set_patterns(files, tmp_path) == ["x/*.evalset.json", "x/c.test.json"]
    (tmp_path / "[y]").mkdir()
    (tmp_path / "[y]" / "e.evalset.json").write_text("{}")
    # A name that is a glob itself is escaped: adk-eval.yaml's eval sets are globs.
    (tmp_path / "[y]" / "f.test.json").write_text("{}")
    assert eval_set_patterns([tmp_path / "[y]" / "e.evalset.json"], tmp_path) == [
        "[[]y]/*.evalset.json"]
    assert eval_set_patterns([tmp_path / "[y]" / "f.test.json", tmp_path / "x/c.test.json"],
                             tmp_path) == ["[[]y]/*.test.json", "x/c.test.json"]


def test_init_beside_links_to_nothing_writes_what_plan_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun,
) -> None:
    """Beside the eval sets, two links to one missing file outside the repository (their
    patterns named each file by its resolved target, which raised ValueError "not in the
    subpath") and a loop of links (RuntimeError): ``init`` writes adk-eval.yaml naming the
    real eval sets, says which links it left out, and ``plan`` with it runs clean."""
    root = copy_examples(tmp_path / "repo")
    evals = root / "travel_agent" / "eval"
    (evals / "a.evalset.json").symlink_to("/gone/x.evalset.json")
    (evals / "b.evalset.json").symlink_to("/gone/x.evalset.json")
    (evals / "loop.evalset.json").symlink_to("loop.evalset.json")
    monkeypatch.chdir(root)
    result = cli("init")
    assert result.exit_code == 0, result.output
    assert ("warning: suite `travel_agent`: eval set `travel_agent/eval/a.evalset.json` left "
            "out: it is a link to /gone/x.evalset.json, which does not exist") in result.output
    assert "eval set `travel_agent/eval/loop.evalset.json` left out: it is a loop of links" \
        in result.output
    [suite] = yaml.safe_load((root / "adk-eval.yaml").read_text())["suites"]
    assert suite["eval_sets"] == ["travel_agent/eval/*.test.json",
                                  "travel_agent/eval/travel.evalset.json"]
    _same_suites(root)
    planned = cli("plan")
    assert planned.exit_code == 0 and "error" not in planned.output, planned.output


def test_a_linked_eval_set_is_named_as_the_link(tmp_path: Path) -> None:
    """A member named alone is named by its link, not by where the link points (two links
    to one file outside the root raised ValueError)."""
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a.evalset.json").symlink_to("/etc/hostname")
    (tmp_path / "x" / "b.evalset.json").symlink_to("/etc/hostname")
    assert eval_set_patterns([tmp_path / "x" / "a.evalset.json"], tmp_path) == [
        "x/a.evalset.json"]


def _readme_workflow() -> dict:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Getting started", 1)[1].split("\n## ", 1)[0]
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", section, re.S) if "jobs:" in b]
    return yaml.safe_load(block)


def test_readme_shows_the_workflow_init_writes() -> None:
    """README's first steps run `init`, and the workflow they show is the one it writes for
    a repository with requirements.txt whose default branch is main."""
    text = README.read_text(encoding="utf-8")
    steps = text.split("## Getting started", 1)[1].split("\n## ", 1)[0]
    assert "adk-eval-action init" in steps
    assert _readme_workflow() == yaml.safe_load(workflow_text(
        WorkflowSpec(branch="main", requirements=["requirements.txt"])))
    # A stuck tool or model ends the job within the limit, not GitHub's 6 hours.
    assert _readme_workflow()["jobs"]["eval"]["timeout-minutes"] == 30


def test_a_suite_on_the_default_criteria_gets_the_config_found_near_as_a_comment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun
) -> None:
    root = starter_pack(tmp_path)
    (root / "tests/eval/evalsets").rename(root / "tests/eval/sets")
    monkeypatch.chdir(root)
    result = cli("init")
    assert result.exit_code == 0, result.output
    assert "warning: suite `app`: the eval sets in tests/eval/sets are scored with" in (
        result.output)
    text = (root / "adk-eval.yaml").read_text()
    assert ("    eval_sets:\n      - tests/eval/sets/*.evalset.json\n"
            "    # No eval config: ADK's default criteria (tool_trajectory_avg_score 1.0,\n"
            "    # response_match_score 0.8). Found near the eval sets:\n"
            "    # eval_config: tests/eval/eval_config.json\n") in text
    assert "eval_config" not in yaml.safe_load(text)["suites"][0]


def test_init_leaves_empty_eval_sets_out_in_exclude_and_plan_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun,
) -> None:
    """Eval sets ``adk web`` saved without an eval case (camelCase ``evalCases: []``, a
    case with ``"conversation": []``) go to ``exclude`` with why; a suite with nothing
    else is left out; ``plan`` with the written file then refuses nothing."""
    root = copy_examples(tmp_path / "repo")
    evals = root / "travel_agent" / "eval"
    (evals / "new.evalset.json").write_text('{"evalSetId": "new", "evalCases": []}')
    (evals / "blank.evalset.json").write_text(
        '{"eval_set_id": "blank", "eval_cases": [{"eval_id": "b", "conversation": []}]}')
    (root / "travel_agent" / "drafts").mkdir()
    (root / "travel_agent" / "drafts" / "d.evalset.json").write_text("[]")
    monkeypatch.chdir(root)
    result = cli("init")
    assert result.exit_code == 0, result.output
    text = (root / "adk-eval.yaml").read_text()
    assert "# Eval sets without an eval case to run (`adk web` saves" in text
    config = yaml.safe_load(text)
    assert config["exclude"] == ["/travel_agent/eval/blank.evalset.json",
                                 "/travel_agent/eval/new.evalset.json"]
    assert [s["name"] for s in config["suites"]] == ["travel_agent:eval"]
    assert "suite travel_agent:drafts left out: none of its eval sets holds an eval case" \
        in result.output
    assert "warning: travel_agent/eval/new.evalset.json left out (`exclude`" in result.output
    path = root / "adk-eval.yaml"
    [suite] = suites_from_config(load_project_config(path), path)
    assert sorted(p.name for p in suite.eval_set_paths) == [
        "legacy_weather.test.json", "travel.evalset.json"]
    planned = cli("plan")
    assert planned.exit_code == 0, planned.output
    assert "error" not in planned.output and "matches no eval set" not in planned.output
    assert re.search(r"^suite travel_agent:eval: 2 eval set\(s\)", planned.output, re.M)


def test_exclude_applies_to_a_suites_globs_and_warns_when_it_matches_nothing(
    example_repo: Path, cli: CliRun,
) -> None:
    """The advice of an empty eval set's error works with suites: ``exclude`` leaves the
    file out of the suite's globs; a pattern that excludes nothing is a warning; one that
    leaves a suite no eval set is an error naming it."""
    evals = example_repo / "travel_agent" / "eval"
    (evals / "test_eval_set.evalset.json").write_text('{"evalSetId": "t", "evalCases": []}')
    suite = ("suites:\n  - name: t\n    agent: travel_agent\n"
             "    eval_sets: [travel_agent/eval/*.evalset.json, travel_agent/eval/*.test.json]\n")
    (example_repo / "adk-eval.yaml").write_text(suite)
    refused = cli("plan")
    assert refused.exit_code == 2 and "`eval_cases` is empty" in refused.output
    (example_repo / "adk-eval.yaml").write_text(
        'exclude: ["**/test_eval_set.evalset.json", "drafts/", "!keep.json"]\n' + suite)
    planned = cli("plan")
    assert planned.exit_code == 0, planned.output
    assert "suite t: 2 eval set(s)" in planned.output
    assert ("warning: `exclude` pattern 'drafts/' of adk-eval.yaml matches no eval set"
            in planned.output)
    assert "'!keep.json'" not in planned.output and "'**/test_eval_set" not in planned.output
    (example_repo / "adk-eval.yaml").write_text('exclude: ["travel_agent/"]\n' + suite)
    none_left = cli("plan")
    assert none_left.exit_code == 2
    assert "(field `suites[0].eval_sets`): `exclude` leaves suite `t` no eval set" \
        in none_left.output


@pytest.mark.parametrize("name", ["a*b.evalset.json", "x [1]?.evalset.json", "#n!.evalset.json",
                                  "back\\slash .evalset.json"])
def test_an_exclude_pattern_names_its_one_file(tmp_path: Path, name: str) -> None:
    """``init``'s exclude line for a file names that file and no sibling, whatever its
    name holds (git's own wildmatch, through ``find_eval_sets``)."""
    from adk_eval_action.project.discovery import find_eval_sets
    from adk_eval_action.project.scaffold import exclude_pattern

    folder = tmp_path / "ev [x]"
    folder.mkdir()
    for sibling in (name, "ab.evalset.json", "a-b.evalset.json", "x 1a.evalset.json",
                    "n.evalset.json", "back.evalset.json"):
        (folder / sibling).write_text("[]")
    pattern = exclude_pattern(f"ev [x]/{name}")
    left = find_eval_sets([tmp_path], [pattern], tmp_path)
    assert sorted(p.name for p in left) == sorted(
        p.name for p in folder.iterdir() if p.name != name)
