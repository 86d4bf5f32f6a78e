"""What ships agrees with itself: the lock with pyproject.toml's ranges, action.yml's image
with the package version and the release workflow, docs/compatibility.md's tested
google-adk versions with the declared range, and schemas/ with the models (and with the
CLI's own validation of adk-eval.yaml)."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the tomli backport, where installed
    tomllib = pytest.importorskip("tomli")
from click.testing import CliRunner
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from adk_eval_action.cli import main

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# The image's interpreter: Debian bookworm's Python 3.11 on Linux (requirements.lock's target).
IMAGE_ENV = {"python_version": "3.11", "python_full_version": "3.11.2", "sys_platform": "linux",
             "platform_system": "Linux", "platform_machine": "x86_64",
             "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def lock_pins() -> dict[str, tuple[Version, int]]:
    """Package name -> (pinned version, number of sha256 hashes) for the image's Python."""
    text = (ROOT / "requirements.lock").read_text()
    pins = {}
    for block in re.split(r"\n(?=[a-z0-9])", text):
        head = block.split("\\")[0].strip()
        if not head or head.startswith("#"):
            continue
        requirement = Requirement(head)
        if requirement.marker is not None and not requirement.marker.evaluate(IMAGE_ENV):
            continue
        [spec] = requirement.specifier
        assert spec.operator == "==", head
        pins[requirement.name.lower()] = (Version(spec.version), block.count("--hash=sha256:"))
    return pins


# --------------------------------------------------------------------------- lock


def test_lock_pins_every_dependency_inside_pyproject_ranges() -> None:
    pins = lock_pins()
    assert all(hashes >= 1 for _, hashes in pins.values())
    for line in PYPROJECT["project"]["dependencies"]:
        requirement = Requirement(line)
        version, _ = pins[requirement.name.lower()]
        assert version in requirement.specifier, f"{version} of {line}"
    assert "uv" in pins and "pip" not in pins and "setuptools" not in pins


def test_lock_has_google_adks_eval_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every requirement of google-adk[eval] (from the installed google-adk's metadata when
    it is the locked version) is pinned inside its range."""
    pins = lock_pins()
    adk, _ = pins["google-adk"]
    if Version(importlib.metadata.version("google-adk")) != adk:
        pytest.skip(f"installed google-adk is not the locked {adk}")
    for line in importlib.metadata.requires("google-adk") or []:
        requirement = Requirement(line)
        marker = requirement.marker or Marker("python_version >= '3'")
        if not marker.evaluate({**IMAGE_ENV, "extra": "eval"}):
            continue
        version, _ = pins[requirement.name.lower()]
        assert version in requirement.specifier, f"{version} of {line}"


# --------------------------------------------------------------------------- release


def test_action_image_tag_package_version_and_release_agree() -> None:
    version = importlib.metadata.version("adk-eval-action")
    image = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["image"]
    assert image == f"docker://ghcr.io/adk-eval-action/adk-eval-action:{version}"

    release = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert release[True]["push"]["tags"] == ["v[0-9]+.[0-9]+.[0-9]+"]  # `on:` reads as True
    steps = release["jobs"]["image"]["steps"]
    [check] = [s for s in steps if s.get("id") == "check"]
    assert "scripts/release_check.py" in check["run"]
    [push] = [s for s in steps if s.get("id") == "push"]
    assert push["with"]["platforms"] == "linux/amd64,linux/arm64"
    assert push["with"]["push"] is True and push["with"]["provenance"] == "mode=max"
    [meta] = [s for s in steps if s.get("id") == "meta"]
    assert meta["with"]["images"] == "${{ steps.check.outputs.repository }}"
    assert "type=semver,pattern={{major}}" in meta["with"]["tags"]
    assert "git push --force origin" in release["jobs"]["major-tag"]["steps"][-1]["run"]


@pytest.mark.parametrize(("tag", "owner", "code", "said"), [
    ("v{version}", "adk-eval-action", 0, "image=ghcr.io/adk-eval-action/adk-eval-action:"),
    ("v{version}", "Adk-Eval-Action", 0, "repository=ghcr.io/adk-eval-action/adk-eval-action"),
    ("v9.9.9", "adk-eval-action", 1, "tag v9.9.9 is not v{version}"),
    ("v{version}", "someone-else", 1, "not ghcr.io/someone-else/adk-eval-action"),
])
def test_release_check_passes_only_when_tag_version_image_and_owner_agree(
    tag: str, owner: str, code: int, said: str,
) -> None:
    version = importlib.metadata.version("adk-eval-action")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "release_check.py"), tag.format(version=version)],
        capture_output=True, text=True, check=False,
        env={"GITHUB_REPOSITORY_OWNER": owner, "PATH": ""},
    )
    assert done.returncode == code, done.stderr
    assert said.format(version=version) in done.stdout + done.stderr


# --------------------------------------------------------------------------- compatibility


def compat_rows() -> list[dict[str, str]]:
    """The table of docs/compatibility.md that scripts/compat.py --write keeps."""
    text = (ROOT / "docs" / "compatibility.md").read_text()
    table = text.split("<!-- compat-table")[1].split("<!-- /compat-table -->")[0]
    lines = [line for line in table.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in line.strip("|").split(" | ")), strict=False))
            for line in lines[2:]]


def test_declared_google_adk_range_is_what_the_compatibility_run_passed() -> None:
    [adk] = [Requirement(d) for d in PYPROJECT["project"]["dependencies"]
             if d.startswith("google-adk")]
    rows = compat_rows()
    passed = sorted(Version(r["google-adk"]) for r in rows if r["core tests"] == "passes")
    assert len(passed) >= 3
    for row in rows:
        inside = Version(row["google-adk"]) in adk.specifier
        assert row["in the declared range"] == ("yes" if inside else "no"), row
        if inside:
            assert row["core tests"] == "passes", row
    # The lower bound is the oldest version that passed, and a version below it failed.
    [lower] = [s for s in adk.specifier if s.operator == ">="]
    assert Version(lower.version) == passed[0]
    assert any(r["core tests"] == "fails" and Version(r["google-adk"]) < passed[0]
               for r in rows)
    # The newest version tested is the one the image locks.
    assert passed[-1] == lock_pins()["google-adk"][0]
    assert SpecifierSet(str(adk.specifier)).contains(str(passed[-1]))


def test_ci_workflow_tests_every_version_inside_the_declared_range() -> None:
    """ci.yml's compat matrix is the table's versions inside the declared range (those
    that .ci/run tests with `scripts/compat.py --core`)."""
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    matrix = workflow["jobs"]["compat"]["strategy"]["matrix"]["google-adk"]
    assert matrix == [r["google-adk"] for r in compat_rows()
                      if r["in the declared range"] == "yes"]


# --------------------------------------------------------------------------- schemas


@pytest.mark.parametrize(("kind", "file"), [("config", "adk-eval.schema.json"),
                                            ("results", "results.schema.json"),
                                            ("comparison", "comparison.schema.json"),
                                            ("history", "history.schema.json")])
def test_schemas_are_current(kind: str, file: str) -> None:
    done = CliRunner().invoke(main, ["schema", kind], catch_exceptions=False)
    assert done.exit_code == 0
    assert done.output == (ROOT / "schemas" / file).read_text(encoding="utf-8"), (
        f"schemas/{file} is stale: adk-eval-action schema {kind} > schemas/{file}")


def config_validator() -> jsonschema.protocols.Validator:
    schema = json.loads((ROOT / "schemas" / "adk-eval.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def schema_field(error: jsonschema.ValidationError) -> str:
    """The field a schema error is about, dotted with list items as ``[i]``
    (``suites[0].num_runs``): an unexpected or a missing key is named by itself, not by
    the mapping holding it."""
    path: list[str | int] = list(error.absolute_path)
    if error.validator == "additionalProperties":
        path += sorted(set(error.instance) - set(error.schema.get("properties", {})))[:1]
    elif error.validator == "required":
        path += [name for name in error.validator_value if name not in error.instance][:1]
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


@pytest.mark.parametrize(("content", "field"), [
    ("gate: {fail_on: sometimes}\n", "gate.fail_on"),
    ("suites:\n  - {name: a, agent: a, eval_sets: [x.json], num_runs: 0}\n", "suites[0].num_runs"),
    # A misspelt required key is named by its misspelling (project.config.first_error).
    ("suites:\n  - {name: a, agent: a, evalsets: [x.json]}\n", "suites[0].evalsets"),
    ("num_runs: 2\nparalelism: 3\n", "paralelism"),
    ("gate: {min_pass_rate: 1.5}\n", "gate.min_pass_rate"),
])
def test_an_invalid_config_is_refused_by_the_schema_on_the_field_the_cli_names(
    content: str, field: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # the config must lie inside the repository (here: tmp)
    config = tmp_path / "adk-eval.yaml"
    config.write_text(content)
    done = CliRunner().invoke(main, ["run", "--config", str(config)], catch_exceptions=False)
    assert done.exit_code == 2
    named = re.search(r"\(field `([^`]+)`\)", done.output)
    assert named, done.output
    errors = list(config_validator().iter_errors(yaml.safe_load(content)))
    assert errors, "the schema accepted it"
    assert named.group(1) == field
    assert field in {schema_field(e) for e in errors}


def test_docs_config_snippets_and_examples_are_valid_by_the_schema() -> None:
    validator = config_validator()
    checked = 0
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text()
        for block in re.findall(r"^```ya?ml[^\n]*\n(.*?)^```", text, re.S | re.M):
            data = yaml.safe_load(block)
            if isinstance(data, dict) and "jobs" not in data and (
                    {"suites", "gate"} & set(data)):
                errors = [e.message for e in validator.iter_errors(data)]
                assert not errors, f"{doc.name}: {errors}"
                checked += 1
    for example in sorted((ROOT / "examples").glob("*adk-eval.yaml")):
        assert not list(validator.iter_errors(yaml.safe_load(example.read_text())))
        checked += 1
    assert checked >= 3
