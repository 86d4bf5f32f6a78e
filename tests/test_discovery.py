"""Discovery's ``exclude``: gitignore-style patterns relative to adk-eval.yaml's folder
(``Path.match`` ignored ``**`` on Python 3.11, so ``travel_agent/**`` excluded nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_eval_action.errors import ConfigError
from adk_eval_action.project.discovery import find_eval_sets
from adk_eval_action.run.evaluation import find_suites
from adk_eval_action.settings import load_request

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
