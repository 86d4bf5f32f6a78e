"""Agents' own dependencies (project/dependencies.py) and the agent groups of the matrix
workflow (project/jobs.py): where a monorepo keeps each agent's dependency file, what it
declares, which dependencies cannot live together (checked against packaging's own
specifier arithmetic on the versions that decide), and how suites are grouped."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from adk_eval_action.project.dependencies import (
    DependencyConflict,
    RequirementsError,
    declared_requirements,
    dependency_conflicts,
    dependency_file,
)
from adk_eval_action.project.jobs import SUITES_PER_JOB, job_groups


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_dependency_file_of_an_adk_samples_agent_is_its_projects(tmp_path):
    # python/agents/<name>/pyproject.toml beside the <name>/ package (google/adk-samples).
    root = tmp_path / "repo"
    agent = root / "python/agents/brand-search/brand_search"
    _write(agent / "agent.py", "")
    project = _write(root / "python/agents/brand-search/pyproject.toml",
                     '[project]\nname = "b"\ndependencies = ["selenium>=4.0"]\n')
    _write(root / "pyproject.toml", '[project]\nname = "all"\n')  # the repository's own
    assert dependency_file(agent, root) == project
    # A requirements.txt of the project wins over its pyproject; one in the agent folder
    # wins over both.
    pins = _write(root / "python/agents/brand-search/requirements.txt", "selenium==4.1\n")
    assert dependency_file(agent, root) == pins
    own = _write(agent / "requirements.txt", "selenium==4.2\n")
    assert dependency_file(agent, root) == own
    # The folder of adk-eval.yaml is never searched: its files are the workflow's input.
    assert dependency_file(root / "python/agents/other/other", root / "python/agents/other"
                           ) is None


def test_a_link_is_not_a_dependency_file(tmp_path):
    agent = tmp_path / "repo/agents/a/a"
    agent.mkdir(parents=True)
    outside = _write(tmp_path / "elsewhere/requirements.txt", "x==1\n")
    (tmp_path / "repo/agents/a/requirements.txt").symlink_to(outside)
    assert dependency_file(agent, tmp_path / "repo") is None


def test_what_a_requirements_file_declares(tmp_path):
    _write(tmp_path / "base.txt", "requests>=2.31  # HTTP\n-c constraints.txt\n")
    _write(tmp_path / "constraints.txt", "urllib3<3\n")
    path = _write(tmp_path / "requirements.txt", "\n".join([
        "# the agent's own",
        "-r base.txt",
        "--index-url https://pypi.example/simple",
        "-e ./vendor/tool",
        "./wheels/fmt-1.0-py3-none-any.whl",
        "https://example.com/pkg.tar.gz",
        "selenium==4.1.0 ; python_version >= '3.9'",
        "PyYAML \\",
        "  >=6",
        "not a requirement !!",
    ]))
    assert declared_requirements(path, "requirements.txt") == [
        "requests>=2.31", "urllib3<3", 'selenium==4.1.0; python_version >= "3.9"', "PyYAML>=6"]


def test_what_a_pyproject_declares_and_what_it_cannot(tmp_path):
    good = _write(tmp_path / "a/pyproject.toml",
                  '[project]\nname = "a"\ndependencies = ["google-adk>=1.23", "pydantic"]\n')
    assert declared_requirements(good, "a/pyproject.toml") == ["google-adk>=1.23", "pydantic"]
    poetry = _write(tmp_path / "b/pyproject.toml",
                    '[tool.poetry.dependencies]\npython = "^3.11"\nrequests = "^2"\n')
    with pytest.raises(RequirementsError, match=r"b/pyproject.toml declares its dependencies in "
                       r"\[tool.poetry.dependencies\] \(Poetry\)"):
        declared_requirements(poetry, "b/pyproject.toml")
    # google/adk-samples' agents: a [project] table, the dependencies Poetry's.
    samples = _write(tmp_path / "c/pyproject.toml", '[project]\nname = "c"\n\n'
                     '[tool.poetry.dependencies]\npython = "^3.11"\ngoogle-adk = "^0.5.0"\n')
    with pytest.raises(RequirementsError, match=r"\(Poetry\), which are not read without"):
        declared_requirements(samples, "c/pyproject.toml")
    bare = _write(tmp_path / "d/pyproject.toml", '[tool.other]\nx = 1\n')
    with pytest.raises(RequirementsError, match=r"d/pyproject.toml has no \[project\] table"):
        declared_requirements(bare, "d/pyproject.toml")


def _versions(specs: list[str]) -> bool:
    """An independent oracle: whether any version of a dense grid satisfies them all."""
    grid = [f"{a}.{b}.{c}" for a in range(0, 5) for b in range(0, 12) for c in range(0, 4)]
    sets = [SpecifierSet(s) for s in specs]
    return any(all(s.contains(v) for s in sets) for v in grid)


@pytest.mark.parametrize("specs", [
    ["==1.0", "==2.0"], ["<2", ">=2"], [">1.0", "<1.1"], ["~=1.4", ">=1.6"], ["~=1.4", ">=2"],
    [">=1,<3", ">=2.5"], ["!=1.0", "==1.0"], ["", "==1.0"], ["==1.*", ">=1.9,<2"],
    ["<=1.5", ">=1.5"], ["<1.5", ">1.5"], [">=2.1.3", "<2.1.4"],
])
def test_two_suites_conflict_exactly_when_no_version_satisfies_both(specs):
    declared = {f"s{i}": (f"s{i}/requirements.txt", [f"pkg{spec}"])
                for i, spec in enumerate(specs)}
    found = dependency_conflicts(declared)
    assert bool(found) == (not _versions(specs)), found
    if found:
        (conflict,) = found
        assert conflict.package == "pkg" and conflict.apart == [("s0", "s1")]
        assert conflict.suites["s0"] == f"pkg{specs[0]} (s0/requirements.txt)"


def test_google_adk_pins_outside_the_range_or_other_than_the_one_running():
    declared = {
        "old": ("old/pyproject.toml", ["google-adk==1.10.0"]),
        "pinned": ("pinned/requirements.txt", ["google-adk==1.39.1"]),
        "ranged": ("ranged/requirements.txt", ["google-adk>=2.0"]),
        "marked": ("marked/requirements.txt", ["google-adk==1.0; python_version < '3'"]),
    }
    found = dependency_conflicts(declared, adk_version="2.13.0", adk_range=">=1.23,<3")
    # Every two of old, pinned and ranged exclude each other; marked has a marker.
    assert [(sorted(c.suites), c.why) for c in found] == [
        (["old", "pinned", "ranged"], "no version of google-adk satisfies all of them"),
        (["old"], "google-adk==1.10.0 is outside the range this action supports (>=1.23,<3)"),
        (["pinned"], "google-adk==1.39.1 is not the google-adk 2.13.0 this action runs: "
                     "installing it replaces google-adk for every suite of the job"),
    ]
    assert found[0].line().startswith(
        "dependencies that cannot live together: no version of google-adk satisfies all of "
        "them (suite old: google-adk==1.10.0 (old/pyproject.toml); suite pinned: ")
    assert sorted(found[0].apart) == [("old", "pinned"), ("old", "ranged"), ("pinned", "ranged")]
    assert found[0].line().endswith("evaluate them in separate jobs (the matrix workflow "
                                    "`init` writes puts each in its own group)")


def _conflict(*suites: str, package: str = "x") -> DependencyConflict:
    pairs = [(a, b) for i, a in enumerate(suites) for b in suites[i + 1:]]
    return DependencyConflict(package=package, suites={s: "" for s in suites}, why="",
                              apart=pairs)


def test_agent_groups():
    names = [f"a{i:02d}" for i in range(25)]
    assert job_groups(names[:SUITES_PER_JOB]) == [names[:SUITES_PER_JOB]]
    groups = job_groups(names)
    assert [len(g) for g in groups] == [9, 8, 8]  # as even as the cap allows, in order
    assert sorted(n for g in groups for n in g) == names
    # Two suites of one conflict never share a group, even when both would fit in one.
    assert job_groups(["a", "b", "c"], [_conflict("a", "b")]) == [["a", "c"], ["b"]]
    # Only the pairs that conflict are kept apart: an unpinned c may join either.
    three = DependencyConflict(package="x", suites={"a": "", "b": "", "c": ""}, why="",
                               apart=[("a", "b")])
    assert job_groups(["a", "b", "c"], [three]) == [["a", "c"], ["b"]]
    # A suite whose dependencies replace the job's google-adk is alone.
    assert job_groups(["a", "b", "c"], [_conflict("b", package="google-adk")]) == [
        ["b"], ["a", "c"]]
