"""Benchmark the action's image: size, build time, and container start -> first eval case,
side by side with google-adk's own import time in the same image (a script, not a test).

Target (issue 14): image <= 1.0 GB on podman (base included); start -> first eval case
<= google-adk's import time + 2 s.

What is measured, each `--repeat` times (median shown):
  * `podman run IMAGE true`: what starting any container costs here;
  * start -> first eval case: from `podman run` of the action entrypoint (INPUT_* as the
    runner sets them, on a copy of examples/) to the moment the first eval case's agent
    starts (a before_agent_callback added to the example agent writes time.time() to a
    file; host and container share the clock), then the whole run. The callback also
    writes the names of the modules loaded by then;
  * google-adk's import time inside the image: exactly the google.adk modules that were
    loaded when the first eval case started (with whatever they import), timed in-process
    in a fresh container. A fixed list of google-adk modules undercounts: google-adk 2.x
    loads its workflow engine (google.adk.workflow._workflow and the auth, fastapi and
    authlib modules under it) lazily, when an agent first runs;
  * then, in the same process, this package's modules loaded by the first eval case: what
    our imports add on top of google-adk's;
  * the same run with the precompiled bytecode ignored (PYTHONPYCACHEPREFIX pointing at an
    empty folder, so every module is compiled at start): what precompiling saves.

The rest of start -> first eval case (container start, the interpreter, inputs, preflight,
loading the agent) is what remains when both import times are taken away.

Wall times grow with the machine's load (several jobs share its 2 cores), so the same split
is also given in CPU seconds of the action's own process, which the load does not change:
the CPU it had spent at the first eval case (time.process_time() in the callback) against
the interpreter's start, google-adk's import and our modules' import, each timed in CPU too.

Usage: `.venv/bin/python benchmarks/bench_image.py [--build] [--image TAG] [--repeat 3] [--no-cold]`
(podman, prepared by .ci/container.sh; --build builds the Dockerfile first and times it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from adk_eval_action.testing.gemini_fake import GeminiFake, load_script

# The runner's INPUT_* and the podman build are the tests' own plumbing (tests/support).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.runner import podman_build_command, runner_inputs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MARKER = '''

def _bench_first_case(callback_context):  # added by benchmarks/bench_image.py
    import os, sys, time
    path = "/github/workspace/first-case.txt"
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(f"{time.time()!r} {time.process_time()!r}")
        with open("/github/workspace/first-case-modules.txt", "w") as f:
            f.write("\\n".join(sorted(sys.modules)))
    return None


root_agent.before_agent_callback = _bench_first_case
'''


def build(image: str) -> float:
    """Builds the Dockerfile as tests/e2e/test_container.py does; seconds."""
    started = time.monotonic()
    subprocess.run(podman_build_command(image, ROOT), check=True, capture_output=True)
    return time.monotonic() - started


def image_size(image: str) -> int:
    """Bytes, as `podman images` counts them (all layers, base included)."""
    out = subprocess.run(["podman", "image", "inspect", "--format", "{{.Size}}", image],
                         check=True, capture_output=True, text=True).stdout
    return int(out.strip())


def wall(command: list[str]) -> float:
    """Seconds from start to exit of a command that must succeed."""
    started = time.monotonic()
    subprocess.run(command, check=True, capture_output=True)
    return time.monotonic() - started


IMPORT_TIMES = """
import importlib, sys, time, warnings
warnings.simplefilter("ignore")
def load(names):
    wall, cpu = time.perf_counter(), time.process_time()
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # a module that only imports inside its package's context
            pass
    return time.perf_counter() - wall, time.process_time() - cpu
interpreter = time.process_time()
adk = load(sys.argv[1].split(","))
ours = load(sys.argv[2].split(","))
print(adk[0], ours[0], interpreter, adk[1], ours[1])
"""


class Imports(NamedTuple):
    """Import times inside the image, in seconds: wall (what the target compares) and CPU
    (what the process itself spent, whatever the machine's load)."""

    adk: float
    ours: float
    interpreter_cpu: float
    adk_cpu: float
    ours_cpu: float


def import_times(image: str, modules: list[str]) -> Imports:
    """google-adk's import, then this package's, inside the image, in-process, of the
    modules loaded when the first eval case started; and the CPU the interpreter spent
    starting (site, the encodings) before either."""
    adk = [m for m in modules if m == "google.adk" or m.startswith("google.adk.")]
    ours = [m for m in modules if m.split(".")[0] == "adk_eval_action"]
    out = subprocess.run(["podman", "run", "--rm", "--entrypoint", "python", image, "-c",
                          IMPORT_TIMES, ",".join(adk), ",".join(ours)],
                         check=True, capture_output=True, text=True).stdout
    return Imports(*map(float, out.split()[-5:]))


def workspace(root: Path) -> Path:
    """A copy of examples/ whose travel_agent records when its first eval case starts."""
    ws = root / "workspace"
    shutil.copytree(ROOT / "examples", ws, ignore=shutil.ignore_patterns(".adk", "__pycache__",
                                                                "monorepo"))
    agent = ws / "travel_agent" / "agent.py"
    agent.write_text(agent.read_text() + MARKER)
    return ws


def action_env(ws: Path, model_env: dict[str, str]) -> list[str]:
    """-e flags: every input of action.yml at its default, then this run's inputs, then
    ``model_env`` (the fake Gemini API's address and a dummy key, as a workflow's `env:`)."""
    inputs = runner_inputs(ROOT / "action.yml", {
        "paths": "travel_agent", "baseline": "none", "comment": "off", "github_token": ""})
    flags = []
    for name, value in inputs.items():
        flags += ["-e", f"{name}={value}"]
    for name, value in model_env.items():
        flags += ["-e", f"{name}={value}"]
    return flags + ["-e", "GITHUB_WORKSPACE=/github/workspace", "-e", "HOME=/github/home"]


class Run(NamedTuple):
    """One action run, in seconds: start -> first eval case, start -> exit, the CPU the
    action's process had spent at the first eval case; and the modules loaded by then."""

    first: float
    total: float
    first_cpu: float
    modules: list[str]


def first_case(image: str, extra: list[str], model_env: dict[str, str]) -> Run:
    """One action run, timed (see :class:`Run`)."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = workspace(Path(tmp))
        command = ["podman", "run", "--rm", "--network", "host", "-v",
                   f"{ws}:/github/workspace", "--workdir", "/github/workspace",
                   *action_env(ws, model_env), *extra, image]
        started = time.time()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        ended = time.time()
        marker = ws / "first-case.txt"
        if done.returncode != 0 or not marker.exists():
            raise SystemExit(f"action run failed (exit {done.returncode}):\n"
                             f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        modules = (ws / "first-case-modules.txt").read_text().split()
        when, cpu = map(float, marker.read_text().split())
        return Run(when - started, ended - started, cpu, modules)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default="localhost/adk-eval-action:bench")
    parser.add_argument("--build", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-cold", action="store_true",
                        help="skip the runs that compile the bytecode at start")
    args = parser.parse_args()
    if args.build:
        print(f"podman build: {build(args.image):.0f} s (layers cached as they were)")
    print(f"image size: {image_size(args.image) / 1e9:.3f} GB ({image_size(args.image):,} B)")
    # The example's agents run on gemini-2.5-flash: a fake Gemini API on this host answers
    # them (the container shares the host's network), as in tests/e2e/test_container.py.
    with GeminiFake(load_script(ROOT / "examples" / "gemini_fake.yaml").agents) as fake:
        measure(args, fake.env())


def measure(args: argparse.Namespace, model_env: dict[str, str]) -> None:
    """Every measurement of the module docstring, printed."""
    runs = range(args.repeat)
    start = statistics.median(wall(["podman", "run", "--rm", "--entrypoint", "true",
                                    args.image]) for _ in runs)
    warm = [first_case(args.image, [], model_env) for _ in runs]
    modules = warm[0].modules
    imports = Imports(*(statistics.median(x) for x in zip(
        *(import_times(args.image, modules) for _ in runs), strict=True)))
    first, total, first_cpu = (statistics.median(x[i] for x in warm) for i in (0, 1, 2))
    if args.no_cold:
        cold_first = cold_total = float("nan")
    else:
        cold = [first_case(args.image, ["-e",
                                        "PYTHONPYCACHEPREFIX=/tmp/no-precompiled-bytecode"],
                           model_env) for _ in runs]
        cold_first, cold_total = (statistics.median(x[i] for x in cold) for i in (0, 1))
    counted = sum(m.startswith("google.adk") for m in modules)
    adk, ours = imports.adk, imports.ours
    print(f"median of {args.repeat}        precompiled   compiled at start   ratio")
    print(f"start -> first eval case  {first:8.2f} s   {cold_first:8.2f} s      "
          f"{cold_first / first:5.2f}x")
    print(f"start -> exit             {total:8.2f} s   {cold_total:8.2f} s      "
          f"{cold_total / total:5.2f}x")
    print(f"podman run true           {start:8.2f} s")
    print(f"google-adk import         {adk:8.2f} s   ({counted} google.adk modules loaded at "
          "the first eval case, in the image, in-process)")
    print(f"our modules' import       {ours:8.2f} s   (after google-adk's)")
    print(f"the rest                  {first - start - adk - ours:8.2f} s   (interpreter, "
          "inputs, preflight, agent load)")
    print(f"first case - ADK import   {first - adk:8.2f} s   (target <= 2 s)")
    # Wall times grow with the machine's load; the process's own CPU does not.
    rest_cpu = first_cpu - imports.interpreter_cpu - imports.adk_cpu - imports.ours_cpu
    print(f"CPU of the action's process at the first eval case {first_cpu:6.2f} s: "
          f"interpreter start {imports.interpreter_cpu:.2f} s, google-adk import "
          f"{imports.adk_cpu:.2f} s, our modules {imports.ours_cpu:.2f} s, the rest "
          f"{rest_cpu:.2f} s")
    print(f"CPU at first eval case - ADK import CPU {first_cpu - imports.adk_cpu:6.2f} s")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

if __name__ == "__main__":
    main()
