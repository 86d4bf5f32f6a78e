"""Discovery's ``exclude``: gitignore-style patterns relative to adk-eval.yaml's folder
(``Path.match`` ignored ``**`` on Python 3.11, so ``travel_agent/**`` excluded nothing);
the suites of adk-eval.yaml that ``run``/``plan`` PATHS select."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from adk_eval_action.errors import ConfigError
from adk_eval_action.project.discovery import find_eval_sets
from adk_eval_action.run.evaluation import find_suites
from adk_eval_action.settings import load_request
from conftest import CliRun

EVAL = "travel_agent/eval"


def _names(paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root.resolve()).as_posix() for p in paths]


@pytest.mark.parametrize(
    ("exclude", "left"),
    [
        ([], [f"{EVAL}/legacy_weather.test.json", f"{EVAL}/travel.evalset.json"]),
        (["travel_agent/**"], []),
        (["*.test.json"], [f"{EVAL}/travel.evalset.json"]),
        (["eval/"], []),  # a folder at any depth, as in .gitignore
        (["/eval/"], [f"{EVAL}/legacy_weather.test.json", f"{EVAL}/travel.evalset.json"]),
        (["**/legacy_*", "!**/legacy_weather.test.json"],
         [f"{EVAL}/legacy_weather.test.json", f"{EVAL}/travel.evalset.json"]),
    ],
)
def test_exclude_follows_gitignore_rules(example_repo: Path, exclude, left) -> None:
    found = find_eval_sets([example_repo], exclude, example_repo)
    assert _names(found, example_repo) == left


def test_exclude_in_adk_eval_yaml_applies_to_discovery(example_repo: Path) -> None:
    (example_repo / "adk-eval.yaml").write_text('exclude: ["travel_agent/**"]\n')
    with pytest.raises(ConfigError, match="no eval sets found"):
        find_suites(load_request(example_repo))
    (example_repo / "adk-eval.yaml").write_text('exclude: ["**/*.test.json"]\n')
    [suite] = find_suites(load_request(example_repo))
    assert _names(suite.eval_set_paths, example_repo) == [f"{EVAL}/travel.evalset.json"]


def test_exclude_is_relative_to_the_config_folder(example_repo: Path) -> None:
    (example_repo / "travel_agent/adk-eval.yaml").write_text('exclude: ["/eval/*.test.json"]\n')
    request = load_request(example_repo, flags={"config": Path("travel_agent/adk-eval.yaml")})
    [suite] = find_suites(request)
    assert _names(suite.eval_set_paths, example_repo) == [f"{EVAL}/travel.evalset.json"]


def test_a_link_out_is_refused_under_the_name_the_user_sees(example_repo: Path) -> None:
    """An eval set linked to a file outside the repository belongs to the link's folder
    (its suite is named from there, not from /etc) and is refused naming the link and
    where it points; a second name of one file is found once."""
    from adk_eval_action.files import OutsideRoot

    (example_repo / "no-agent").mkdir()
    (example_repo / "no-agent" / "x.evalset.json").symlink_to("/etc/passwd")
    with pytest.raises(OutsideRoot) as raised:
        find_suites(load_request(example_repo, flags={"paths": [Path("no-agent")]}))
    assert str(raised.value).startswith(
        "suite no-agent:no-agent: eval set no-agent/x.evalset.json (a link to /etc/passwd) "
        "is outside the repository root")
    (example_repo / "no-agent" / "x.evalset.json").unlink()
    again = example_repo / EVAL / "again.evalset.json"
    again.symlink_to(example_repo / EVAL / "travel.evalset.json")
    assert _names(find_eval_sets([example_repo], (), example_repo), example_repo) == [
        f"{EVAL}/again.evalset.json", f"{EVAL}/legacy_weather.test.json"]


def _two_suites(root: Path) -> None:
    """``other_agent`` beside ``travel_agent`` (same files), both named in adk-eval.yaml."""
    shutil.copytree(root / "travel_agent", root / "other_agent",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "adk-eval.yaml").write_text(
        "suites:\n"
        "  - {name: travel, agent: travel_agent, eval_sets: [travel_agent/eval/*.evalset.json]}\n"
        "  - {name: other, agent: other_agent, eval_sets: [other_agent/eval/*.evalset.json]}\n")


@pytest.mark.parametrize(("paths", "chosen"), [
    ([], ["travel", "other"]),
    (["."], ["travel", "other"]),
    (["other_agent"], ["other"]),  # the agent folder
    (["travel_agent/eval"], ["travel"]),  # the folder of its eval sets
    (["other_agent/eval/travel.evalset.json"], ["other"]),  # one eval set
    (["travel_agent/agent.py"], []),  # a file that is neither
    (["other_agent", "travel_agent/eval/travel.evalset.json"], ["travel", "other"]),
])
def test_paths_select_the_suites_of_adk_eval_yaml(
    example_repo: Path, cli: CliRun, paths: list[str], chosen: list[str],
) -> None:
    """``run PATHS``/``plan PATHS`` with an adk-eval.yaml naming suites evaluate only the
    suites whose agent or an eval set lies under PATHS (README's CLI section), and refuse
    PATHS that select none, naming the suites."""
    _two_suites(example_repo)
    planned = cli("plan", *paths)
    found = re.findall(r"^suite (\w+): \d+ eval set", planned.output, re.M)
    assert found == chosen, planned.output
    if not chosen:
        assert planned.exit_code == 2
        assert ("travel_agent/agent.py: no suite of adk-eval.yaml has its agent or an eval set "
                "under it (travel (agent travel_agent); other (agent other_agent))"
                ) in planned.output
    elif paths and paths != ["."] and len(chosen) == 1:
        assert f"suites under {', '.join(paths)}: {chosen[0]} (of 2 in adk-eval.yaml)" \
            in planned.output


def test_run_paths_evaluate_only_the_selected_suite(example_repo: Path, cli: CliRun) -> None:
    _two_suites(example_repo)
    result = cli("run", "other_agent", "--results-out", "r.json")
    assert result.exit_code == 0, result.output
    results = json.loads((example_repo / "r.json").read_text())
    assert [s["name"] for s in results["suites"]] == ["other"]


def _links_to_nothing(evals: Path) -> None:
    """Beside the example's eval sets: two links to one missing file outside the
    repository, one to a missing file beside them, and a link to itself (a loop)."""
    (evals / "a.evalset.json").symlink_to("/gone/x.evalset.json")
    (evals / "b.evalset.json").symlink_to("/gone/x.evalset.json")
    (evals / "moved.evalset.json").symlink_to("old.evalset.json")
    (evals / "loop.evalset.json").symlink_to("loop.evalset.json")


LEFT_OUT = [
    f"suite `travel_agent`: eval set `{EVAL}/a.evalset.json` left out: it is a link to "
    "/gone/x.evalset.json, which does not exist",
    f"suite `travel_agent`: eval set `{EVAL}/loop.evalset.json` left out: it is a loop of "
    "links",
    f"suite `travel_agent`: eval set `{EVAL}/moved.evalset.json` left out: it is a link to "
    "old.evalset.json, which does not exist",
]


def test_links_to_nothing_are_left_out_and_named(example_repo: Path) -> None:
    """Discovery leaves a link to a missing file (and a loop of links) out of its suite,
    with a warning naming the link and its target, and evaluates the suite's other eval
    sets; no RuntimeError of a loop, no ValueError of a target outside the root."""
    _links_to_nothing(example_repo / EVAL)
    [suite] = find_suites(load_request(example_repo))
    assert _names(suite.eval_set_paths, example_repo) == [
        f"{EVAL}/legacy_weather.test.json", f"{EVAL}/travel.evalset.json"]
    # The second link to /gone/x.evalset.json is the same missing file: named once.
    assert suite.warnings == LEFT_OUT


def test_a_suites_glob_leaves_links_to_nothing_out(example_repo: Path) -> None:
    """adk-eval.yaml's glob that matches links to nothing leaves them out with the same
    warnings; a glob matching only such links is refused, naming them."""
    _links_to_nothing(example_repo / EVAL)
    (example_repo / "adk-eval.yaml").write_text(
        "suites:\n  - {name: travel_agent, agent: travel_agent, "
        "eval_sets: [travel_agent/eval/*.evalset.json]}\n")
    [suite] = find_suites(load_request(example_repo))
    assert _names(suite.eval_set_paths, example_repo) == [f"{EVAL}/travel.evalset.json"]
    # Each name the glob matched is named (a and b: two links to one missing file).
    assert [w for w in suite.warnings if "left out" in w] == [
        LEFT_OUT[0], LEFT_OUT[0].replace("/a.evalset", "/b.evalset"), *LEFT_OUT[1:]]
    (example_repo / "adk-eval.yaml").write_text(
        "suites:\n  - {name: t, agent: travel_agent, eval_sets: [travel_agent/eval/m*]}\n")
    with pytest.raises(ConfigError, match=r"suites\[0\]\.eval_sets.*eval set glob "
                       r"'travel_agent/eval/m\*' matches only links to nothing: eval set "
                       rf"`{EVAL}/moved\.evalset\.json` left out"):
        find_suites(load_request(example_repo))
