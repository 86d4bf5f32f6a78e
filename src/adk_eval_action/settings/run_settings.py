"""The settings model: :class:`RunSettings` (every option of a run, once) and
:data:`OPTIONS` (each option as flags and inputs see it). See the package docstring."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, field_validator

from adk_eval_action.errors import ConfigError
from adk_eval_action.project.config import (
    MAX_PARALLELISM,
    MAX_RUNS,
    GateConfig,
    ModelRetrySettings,
    ModelSettings,
)
from adk_eval_action.results.history_file import DEFAULT_HISTORY_RUNS, MAX_HISTORY_RUNS
from adk_eval_action.results.model import RESULTS_FILE_NAME
from adk_eval_action.results.shards import ShardSpec
from adk_eval_action.settings.baseline_spec import BaselineSpec

#: The name of the artifact the recording workflow uploads the results file as (the
#: ``artifact_name`` setting's default; baseline.artifact looks for it).
DEFAULT_ARTIFACT_NAME = "adk-eval-results"

Source = Literal["default", "config", "input", "flag"]
#: The layers of :func:`resolve`, lowest first: a later one wins.
PRECEDENCE: tuple[Source, ...] = ("default", "config", "input", "flag")

Command = Literal["run", "compare", "plan", "merge"]
RUN: tuple[Command, ...] = ("run",)
RUN_AND_COMPARE: tuple[Command, ...] = ("run", "compare")
RUN_AND_PLAN: tuple[Command, ...] = ("run", "plan")


@dataclass(frozen=True)
class Option:
    """How an option is given, beside its type and default (``Annotated`` metadata).

    ``help``: the flag's help (and the gist of the action input's description).
    ``commands``: the CLI commands with a flag for it (``()``: action only).
    ``flag``: the flag's name when it is not the field's (``results_out``).
    ``argument``: taken as the command's positional arguments instead of a flag.
    ``input``: an action input of the field's name. ``config``: its key in adk-eval.yaml.
    ``exists``/``dir_okay``: checks of a path flag (click.Path).
    ``aliases``: more flag names of ``run``/``compare`` (``--json-out``; an on/off flag's
    with their ``--no-`` forms: ``--only-changed``, as the action input is named).
    """

    help: str
    commands: tuple[Command, ...] = RUN
    flag: str | None = None
    argument: bool = False
    input: bool = True
    config: str | None = None
    exists: bool = False
    dir_okay: bool = True
    aliases: tuple[str, ...] = ()


class RunSettings(BaseModel):
    """Every option of a run, resolved (see the module docstring for the precedence).

    Paths are relative to the working directory of the run (``RunRequest.workdir``).
    ``record`` None means "decide from the event" (the action: a push to the default
    branch records). The gate rules are ``gate``; as flags and inputs they are flat
    (``--fail-on``, ``fail_on``; ``mode`` is ``--gate-mode``/``gate_mode``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    paths: Annotated[list[Path], Option(
        "Folders or eval set files (*.evalset.json, *.test.json) to evaluate (default: .).",
        commands=RUN_AND_PLAN, argument=True,
    )] = Field(default_factory=lambda: [Path(".")])
    config: Annotated[Path | None, Option(
        "adk-eval.yaml naming suites (default: ./adk-eval.yaml if present).",
        commands=("run", "compare", "plan"), dir_okay=False,
    )] = None
    baseline: Annotated[BaselineSpec, Option(
        "auto | artifact | rerun | none | a results file of the base branch (ours, or ADK "
        "eval_history file/folder). See docs/baselines.md. `plan` estimates tokens and "
        "dollars from a results file's recorded usage.", commands=RUN_AND_PLAN,
    )] = BaselineSpec()
    record: Annotated[bool | None, Option(
        "This run records the baseline (push to the default branch): no lookup.",
    )] = None
    base_ref: Annotated[str | None, Option(
        "Base branch for rerun/artifact (default: the PR's base, else the remote's default).",
    )] = None
    artifact_name: Annotated[str, Option(
        "Name of the baseline artifact the recording workflow uploads.",
    )] = DEFAULT_ARTIFACT_NAME
    baseline_rerun: Annotated[bool, Option(
        "With --baseline auto: re-run the merge-base when no artifact is found "
        "(twice the LLM calls).",
    )] = False
    history: Annotated[Path | None, Option(
        "The default branch's history (adk-eval-history.json) to read: trends, known flaky "
        "eval cases, pooled baseline runs (docs/baselines.md). The action reads the one in "
        "the baseline artifact.", commands=RUN_AND_COMPARE, input=False, exists=True,
        dir_okay=False,
    )] = None
    history_out: Annotated[Path | None, Option(
        "With --record: write the history read (--history; the action: the previous "
        "recorded artifact's) with this run added here (the action writes "
        "adk-eval-history.json beside the results file).", input=False, dir_okay=False,
    )] = None
    history_runs: Annotated[int, Field(ge=1, le=MAX_HISTORY_RUNS), Option(
        "Recorded runs the history keeps (the oldest go first).", config="history_runs",
    )] = DEFAULT_HISTORY_RUNS
    baseline_max_age: Annotated[float, Field(ge=0), Option(
        "Days after which the comment flags the baseline as old (0: never).",
        commands=RUN_AND_COMPARE, config="baseline_max_age",
    )] = 7.0
    results_path: Annotated[Path, Option(
        "Where to write the results JSON.", commands=("run", "merge"), flag="results_out",
    )] = Path(RESULTS_FILE_NAME)
    comment_out: Annotated[Path | None, Option(
        "Write the PR comment here.", commands=RUN_AND_COMPARE, input=False,
    )] = None
    summary_out: Annotated[Path | None, Option(
        "Write the job summary here.", commands=RUN_AND_COMPARE, input=False,
    )] = None
    html_out: Annotated[Path | None, Option(
        "Write the HTML report here: one self-contained file with every eval case's evidence.",
        commands=RUN_AND_COMPARE, input=False,
    )] = None
    comparison_out: Annotated[Path | None, Option(
        "Write the comparison as JSON here (schemas/comparison.schema.json).",
        commands=RUN_AND_COMPARE, input=False, aliases=("--json-out",),
    )] = None
    print_comment: Annotated[bool, Option(
        "Print the rendered comment to stdout.", commands=RUN_AND_COMPARE, input=False,
    )] = False
    num_runs: Annotated[int, Field(ge=1, le=MAX_RUNS), Option(
        "Repeat each eval case N times (given, it wins over every suite's num_runs).",
        commands=RUN_AND_PLAN, config="num_runs",
    )] = 1
    adaptive_runs: Annotated[int | None, Field(ge=1, le=MAX_RUNS), Option(
        "Run eval cases that carry an inconclusive call again on the head, up to this many "
        "runs each, until the calls are decided (at most doubles the head's runs; "
        "docs/gating.md).",
    )] = None
    parallelism: Annotated[int, Field(ge=1, le=MAX_PARALLELISM), Option(
        "Model calls in flight at once (one pool for all suites, eval sets and runs).",
        commands=RUN_AND_PLAN, config="parallelism",
    )] = 4
    models: Annotated[dict[str, ModelSettings], Option(
        "Per-model limits and prices, e.g. {gemini-2.5-flash: {max_concurrency: 8, "
        "input_usd_per_1m_tokens: 0.3, output_usd_per_1m_tokens: 2.5}}.",
        commands=(), input=False, config="models",
    )] = Field(default_factory=dict)
    max_model_calls: Annotated[int | None, Field(ge=1), Option(
        "Budget: send at most this many requests to models (agents, judges, user simulator; "
        "each retry is one); past it the run stops starting calls and ends incomplete.",
        commands=RUN_AND_PLAN, config="budget.model_calls",
    )] = None
    max_tokens: Annotated[int | None, Field(ge=1), Option(
        "Budget: at most this many tokens; each model call reserves what 9 in 10 of its "
        "model's answered calls used at most before it starts, a call that would pass the "
        "budget is not made, and the run then ends incomplete.", commands=RUN_AND_PLAN,
        config="budget.tokens",
    )] = None
    max_usd: Annotated[float | None, Field(gt=0), Option(
        "Budget: at most this many dollars (at the prices of models: in adk-eval.yaml); each "
        "model call reserves what 9 in 10 of its model's answered calls cost at most before "
        "it starts, a call that would pass the budget is not made, and the run then ends "
        "incomplete.",
        commands=RUN_AND_PLAN, config="budget.usd",
    )] = None
    quiet: Annotated[bool, Option(
        "No progress lines while evaluating (the plan, notes, results and table are "
        "still printed).", input=False,
    )] = False
    shard: Annotated[ShardSpec | None, Option(
        "Evaluate only shard K of N of the eval cases (K/N, e.g. 2/4), balanced by turns; "
        "the results file says which shard it is; `adk-eval-action merge` joins the parts.",
    )] = None
    merge: Annotated[list[str], Option(
        "Results files (or glob patterns) of all shards of a run: merged, then compared, "
        "commented and gated instead of evaluating (the matrix's merge job).", commands=(),
    )] = Field(default_factory=list)
    only_changed: Annotated[bool, Option(
        "Evaluate only the suites whose agent folder, eval sets, eval config, adk-eval.yaml "
        "entry or requirements changed since the merge-base; the other suites' results come "
        "from the baseline, marked reused.", flag="changed_only",
        aliases=("--only-changed",),  # the action input's name
    )] = False
    latency: Annotated[float, Field(ge=0), Option(
        "Seconds per model call that the estimated wall time assumes.", commands=("plan",),
        input=False,
    )] = 1.0
    template: Annotated[Path | None, Option(
        "Your own Jinja2 comment template.", commands=RUN_AND_COMPARE, exists=True,
        dir_okay=False,
    )] = None
    on_missing_credentials: Annotated[Literal["fail", "skip"], Option(
        "When the models have no credentials (a pull request from a fork or Dependabot "
        "gets no secrets): fail (exit 2, saying so) or skip (exit 0, a notice, nothing "
        "evaluated).",
    )] = "fail"
    comment: Annotated[Literal["update", "new", "off"], Option(
        "Sticky comment mode.", commands=(),
    )] = "update"
    comment_key: Annotated[str, Option("Keeps one comment per key.", commands=())] = "default"
    github_token: Annotated[SecretStr, Option(
        "Token for the PR comment (default: $GITHUB_TOKEN).", commands=(),
    )] = SecretStr("")
    requirements: Annotated[list[str], Option(
        "Agent requirements to install.", commands=(),
    )] = Field(default_factory=list)
    working_directory: Annotated[Path, Option("Folder to run in.", commands=())] = Path(".")
    comment_artifact: Annotated[Path | None, Option(
        "Post this earlier run's comment artifact instead of evaluating.", commands=(),
    )] = None
    gate: GateConfig = Field(default_factory=GateConfig)
    #: How model calls are retried: adk-eval.yaml's ``model_retries:`` only (no flag, no input).
    model_retries: ModelRetrySettings = Field(default_factory=ModelRetrySettings)

    def outside_workspace(
        self, env: typing.Mapping[str, str], workdir: Path,
    ) -> ConfigError | None:
        """Whether the folder the action runs in (``workdir``, resolved) or the results
        file it writes (the comment and PR context go beside it) resolves outside the
        runner's checkout (``GITHUB_WORKSPACE`` of ``env``, the repository root): the error
        naming the input, its value and the workspace, else None (also when there is no
        workspace: not in the runner). The container runs as root, so a ``../..`` or an
        absolute path in an input could otherwise read or write anywhere."""
        if not env.get("GITHUB_WORKSPACE"):
            return None
        root = Path(env["GITHUB_WORKSPACE"]).resolve()
        for name, value, resolved in (
            ("working_directory", self.working_directory, workdir),
            ("results_path", self.results_path, (workdir / self.results_path).resolve()),
        ):
            if resolved != root and root not in resolved.parents:
                return ConfigError(
                    f"invalid input {name}",
                    f"{value} resolves to {resolved}, outside the workspace {root} "
                    "(GITHUB_WORKSPACE): the action reads and writes only inside the checkout",
                )
        return None

    @field_validator("shard", mode="before")
    @classmethod
    def _shard_from_text(cls, value: Any) -> Any:
        """``--shard 2/4`` and the ``shard`` input are text."""
        return ShardSpec.parse(value) if isinstance(value, str) else value

    _sources: dict[str, Source] = PrivateAttr(default_factory=dict)

    @property
    def token(self) -> str:
        """The GitHub token in clear (only for the Authorization header)."""
        return self.github_token.get_secret_value()

    def source(self, name: str) -> Source:
        """The layer option ``name`` (flat name, :data:`OPTIONS`) came from."""
        return self._sources.get(name, "default")

    def explicit(self, name: str) -> Any:
        """Option ``name``'s value when a flag or an input gave it, else None: what a
        re-run of the base commit repeats on top of that commit's own adk-eval.yaml."""
        if self.source(name) not in ("input", "flag"):
            return None
        spec = OPTIONS[name]
        return getattr(self.gate if spec.gate else self, spec.field)


@dataclass(frozen=True)
class OptionSpec:
    """One option as flags and inputs see it: ``name`` (flat: the input's name),
    ``field`` (in RunSettings, or in GateConfig when ``gate``), its type and default."""

    name: str
    field: str
    gate: bool
    annotation: Any
    default: Any
    option: Option
    ge: float | None = None
    le: float | None = None

    @property
    def flag(self) -> str:
        """The flag of ``run``/``compare`` (``--results-out``)."""
        return "--" + (self.option.flag or self.name).replace("_", "-")

    @property
    def input_flag(self) -> str:
        """The flag of ``action``: the input's name (``--results-path``)."""
        return "--" + self.name.replace("_", "-")

    @property
    def base_type(self) -> Any:
        """The annotation without ``None``."""
        args = [a for a in typing.get_args(self.annotation) if a is not type(None)]
        union = typing.get_origin(self.annotation) in (typing.Union, types.UnionType)
        return args[0] if union and len(args) == 1 else self.annotation

    @property
    def choices(self) -> tuple[str, ...]:
        """The values of a Literal option, else ()."""
        base = self.base_type
        return typing.get_args(base) if typing.get_origin(base) is Literal else ()

    @property
    def is_list(self) -> bool:
        return typing.get_origin(self.base_type) is list


#: Gate rules whose flag and input name differ from the GateConfig field.
GATE_NAMES = {"mode": "gate_mode"}


def _bounds(metadata: list[Any]) -> tuple[float | None, float | None]:
    ge = next((m.ge for m in metadata
               if isinstance(m, annotated_types.Ge) and isinstance(m.ge, (int, float))), None)
    le = next((m.le for m in metadata
               if isinstance(m, annotated_types.Le) and isinstance(m.le, (int, float))), None)
    return ge, le


def _specs() -> dict[str, OptionSpec]:
    specs: dict[str, OptionSpec] = {}
    for name, info in RunSettings.model_fields.items():
        option = next((m for m in info.metadata if isinstance(m, Option)), None)
        if option is None:
            continue
        default = info.get_default(call_default_factory=True)
        specs[name] = OptionSpec(name, name, False, info.annotation, default, option,
                                 *_bounds(info.metadata))
    for field, info in GateConfig.model_fields.items():
        if field == "metrics":  # per-metric rules exist in adk-eval.yaml only
            continue
        name = GATE_NAMES.get(field, field)
        option = Option(info.description or "", commands=RUN_AND_COMPARE,
                        config=f"gate.{field}")
        specs[name] = OptionSpec(name, field, True, info.annotation, info.default, option,
                                 *_bounds(info.metadata))
    return specs


#: Every option by its flat name (the action input's name), in declaration order.
OPTIONS: dict[str, OptionSpec] = _specs()
