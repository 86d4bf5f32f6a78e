#!/usr/bin/env python3
"""Runs the core tests on several google-adk versions, each in a throwaway virtualenv.

For each version: a virtualenv under --work-dir (default `.compat/`, reused when its
install already matches), this checkout with its test extra installed by uv with google-adk
overridden to that exact version (so a version outside pyproject.toml's range can still be
tried and show *why* it is outside), then pytest on the core tests: evaluation end to end,
custom metrics, rubrics, ADK's eval_history as a baseline, parity with `adk eval`, rescoring
and the stand-in models. Prints one markdown table row per version, and with --write puts
the table into docs/compatibility.md between its markers.

Exit status: 0 when every version inside pyproject.toml's google-adk range passed, 1 when
one of them failed, 2 when the tools could not be set up. A version outside the range may
fail; its row says why.

    scripts/compat.py                     # the versions of docs/compatibility.md
    scripts/compat.py --core 1.23.0 2.13.0  # a subset (what .ci/run runs)
    scripts/compat.py --write             # refresh the table in docs/compatibility.md
    scripts/compat.py --full 1.39.1       # the whole suite but the container test (.ci/run)

Standard library only (tomllib): it runs with any python3 >= 3.11.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "compatibility.md"
TABLE_START = "<!-- compat-table: written by scripts/compat.py --write -->"
TABLE_END = "<!-- /compat-table -->"
UV_VERSION = "0.13.9"

# The oldest 1.x, and the newest 1.x without custom metrics in EvalConfig (both below the
# declared range, to show why), the first with them (1.23, which calls custom metrics without
# the EvalMetric), the first 1.x that passes the EvalMetric, a middle 1.x, the newest 1.x,
# the first 2.x, 2.x before and after ADK's `session_id or ""` (2.7), a later 2.x, the newest
# 2.x (the one requirements.lock pins).
VERSIONS = ("1.18.0", "1.22.1", "1.23.0", "1.24.1", "1.31.1", "1.39.1", "2.0.0", "2.5.0",
            "2.7.1", "2.9.2", "2.13.0")
CORE_TESTS = (
    "tests/e2e/test_pipeline.py",
    "tests/integration/test_adk_parity.py",
    "tests/integration/test_rescore.py",
    "tests/integration/test_standins.py",
    "tests/unit/adk/test_evalsets.py",
    "tests/integration/test_baseline.py::test_version_and_hash_mismatch_appear_in_the_comment",
)

# The whole suite as scripts/test.sh runs it, but the container test: the image installs
# requirements.lock's google-adk, whatever the virtualenv has.
FULL_SUITE = ("-m", "not container", "tests")


@dataclass
class Outcome:
    """What one google-adk version did: counts from pytest's JUnit XML, or why it did not run."""

    version: str
    installed: str = ""
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    why: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.installed) and self.failed == 0 and self.passed > 0

    def row(self, in_range: bool) -> str:
        verdict = "passes" if self.ok else "fails"
        declared = "yes" if in_range else "no"
        counts = f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"
        why = self.why.replace("|", "\\|") or "–"
        return (f"| {self.version} | {declared} | {verdict} | {counts} | "
                f"{self.seconds:.0f} s | {why} |")


def declared_range() -> str:
    """google-adk's version specifier in pyproject.toml's dependencies, e.g. '>=1.23,<3'."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for dep in deps:
        match = re.match(r"google-adk(\[[^\]]*\])?\s*(.*)", dep)
        if match:
            return match.group(2).strip()
    raise SystemExit("pyproject.toml names no google-adk dependency")


def in_range(version: str, specifier: str) -> bool:
    """Whether `version` satisfies a specifier of >=, >, <, <=, == and != clauses."""
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", v)[:3])

    checks = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
              "<": lambda a, b: a < b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        op, bound = re.match(r"(>=|<=|==|!=|>|<)\s*(\S+)", clause).groups()
        if not checks[op](key(version), key(bound)):
            return False
    return True


def uv_command(work: Path) -> list[str]:
    """uv at UV_VERSION: the one on PATH if it is that version, else one installed in work/."""
    found = shutil.which("uv")
    if found and subprocess.run([found, "--version"], capture_output=True, text=True,
                                check=False).stdout.split()[1:2] == [UV_VERSION]:
        return [found]
    tools = work / "tools"
    uv = tools / "bin" / "uv"
    if not uv.exists():
        subprocess.run([sys.executable, "-m", "venv", str(tools)], check=True)
        subprocess.run([str(tools / "bin" / "pip"), "install", "-q", f"uv=={UV_VERSION}"],
                       check=True)
    return [str(uv)]


def install(uv: list[str], version: str, venv: Path) -> tuple[str, str]:
    """This checkout + its test extra with google-adk[eval]==version; (installed, error)."""
    python = venv / "bin" / "python"
    if not python.exists():
        # --seed: pip inside, as in the README's virtualenv (the monorepo tests install an
        # agent's own requirements with this Python's installer)
        subprocess.run([*uv, "venv", "-q", "--seed", "--python", sys.executable, str(venv)],
                       check=True)
    override = venv / "override.txt"
    override.write_text(f"google-adk[eval]=={version}\n")
    done = subprocess.run(
        [*uv, "pip", "install", "-q", "--python", str(python), "--override", str(override),
         "--reinstall-package", "adk-eval-action", f"{ROOT}[test]"],
        capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        return "", last_line(done.stderr) or "install failed"
    shown = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('google-adk'))"],
        capture_output=True, text=True, check=False,
    )
    return shown.stdout.strip(), ""


def short(line: str) -> str:
    """A message for a table cell: pytest's `E` margin and file paths in parentheses
    dropped, at most 160 characters."""
    line = re.sub(r"^E\s+", "", line.strip())
    return re.sub(r" \((?:/|[A-Za-z]:\\)[^)]*\)", "", line).strip()[:160]


def last_line(text: str) -> str:
    """The last non-empty line of a log, shortened for a table cell."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return short(lines[-1]) if lines else ""


def run_tests(venv: Path, version: str, tests: tuple[str, ...], name: str = "core") -> Outcome:
    """pytest on `tests` (pytest arguments) in `venv`; counts and the first failure's message.
    `name` keeps the JUnit report and log of one selection apart from another's."""
    report = venv / f"junit-{name}.xml"
    report.unlink(missing_ok=True)
    # uv installs no bytecode, and with PYTHONDONTWRITEBYTECODE (set on this machine) every
    # process compiled google-adk's modules again: ~13 s of CPU per process. Written into the
    # virtualenv's own folder, the bytecode serves the rest of the run and later runs.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(venv / "pycache")
    started = time.monotonic()
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--continue-on-collection-errors", f"--junitxml={report}", *tests],
        cwd=ROOT, capture_output=True, text=True, check=False, env=env,
    )
    outcome = Outcome(version, seconds=time.monotonic() - started)
    (venv / f"pytest-{name}.log").write_text(done.stdout + done.stderr)
    if not report.exists():
        outcome.failed, outcome.why = 1, last_line(done.stdout + done.stderr)
        return outcome
    whys: list[str] = []
    for case in ET.parse(report).getroot().iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            outcome.failed += 1
            whys.append(f"{case.get('name')}: {first_error(problem)}")
        elif case.find("skipped") is not None:
            outcome.skipped += 1
        else:
            outcome.passed += 1
    outcome.why = whys[0] if whys else ""
    if len(whys) > 1:
        outcome.why += f" (and {len(whys) - 1} more)"
    return outcome


def first_error(problem: ET.Element) -> str:
    """The exception line of a JUnit failure (`E   ImportError: ...`), else its message."""
    for line in (problem.text or "").splitlines():
        if line.startswith("E   ") and "Error" in line or line.startswith("E   assert"):
            return short(line[4:])
    message = (problem.get("message") or "").strip()
    return short(message.splitlines()[0]) if message else ""


def write_doc(rows: list[str]) -> None:
    """Puts `rows` into the table between the markers of docs/compatibility.md: a row of a
    version already there is replaced, other versions' rows are kept, in version order, and
    every row's "in the declared range" cell is set from pyproject.toml as it is now."""
    specifier = declared_range()
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    table = {}
    for line in [*text[start:end].splitlines(), *rows]:
        if re.match(r"\| \d", line):  # a version's row, not the header or its rule
            cells = line.split(" | ")
            version = cells[0].lstrip("| ").strip()
            cells[1] = "yes" if in_range(version, specifier) else "no"
            table[version] = " | ".join(cells)
    ordered = sorted(table, key=lambda v: tuple(int(n) for n in re.findall(r"\d+", v)[:3]))
    header = ("| google-adk | in the declared range | core tests | counts | time | "
              "first failure |\n| --- | --- | --- | --- | --- | --- |")
    body = "\n".join(table[v] for v in ordered)
    DOC.write_text(f"{text[:start]}\n{header}\n{body}\n{text[end:]}", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("versions", nargs="*", help=f"google-adk versions (default: {VERSIONS})")
    parser.add_argument("--core", action="store_true", help="only versions in the declared range")
    parser.add_argument("--write", action="store_true", help="update docs/compatibility.md")
    parser.add_argument("--full", action="store_true", help="the whole suite but the container "
                        "test (the image pins its own google-adk) instead of the core tests")
    parser.add_argument("--refresh", action="store_true", help="run nothing; only set the "
                        "table's declared-range column from pyproject.toml")
    parser.add_argument("--work-dir", type=Path, default=Path(os.environ.get(
        "ADK_COMPAT_DIR", ROOT / ".compat")), help="where the virtualenvs live")
    args = parser.parse_args()
    specifier = declared_range()
    if args.full and args.write:
        parser.error("--write records core-test rows only; --full prints its rows")
    if args.refresh:
        write_doc([])
        return 0
    versions = args.versions or list(VERSIONS)
    if args.core:
        versions = [v for v in versions if in_range(v, specifier)]
    args.work_dir.mkdir(parents=True, exist_ok=True)
    try:
        uv = uv_command(args.work_dir)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"compat: could not set up uv {UV_VERSION}: {exc}", file=sys.stderr)
        return 2
    print(f"google-adk declared in pyproject.toml: {specifier}", flush=True)
    rows, broken = [], []
    for version in versions:
        venv = args.work_dir / f"adk-{version}"
        started = time.monotonic()
        installed, error = install(uv, version, venv)
        took = time.monotonic() - started
        if installed != version:
            outcome = Outcome(version, why=error or f"installed {installed} instead")
        else:
            outcome = (run_tests(venv, version, FULL_SUITE, "full") if args.full
                       else run_tests(venv, version, CORE_TESTS))
            outcome.installed = installed
        rows.append(outcome.row(in_range(version, specifier)))
        if args.write:
            write_doc(rows[-1:])
        log = venv / f"pytest-{'full' if args.full else 'core'}.log"
        print(f"{rows[-1]}   (install {took:.0f} s; log {log})", flush=True)
        if in_range(version, specifier) and not outcome.ok:
            broken.append(version)
    if broken:
        print(f"compat: declared as supported but failing: {', '.join(broken)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
