"""One settings model: action.yml, the CLI and ``RunSettings`` agree, and ``resolve`` applies
the documented precedence (flags > action inputs > adk-eval.yaml > defaults)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from adk_eval_action.action import action_command, comment_command
from adk_eval_action.cli import main
from adk_eval_action.errors import ConfigError
from adk_eval_action.project.config import GateConfig, ProjectConfig, load_project_config
from adk_eval_action.settings import OPTIONS, RunSettings, load_request, read_inputs, resolve

ACTION_YML = Path(__file__).resolve().parents[3] / "action.yml"
#: action.yml's default of the token is the workflow's token, which the runner evaluates.
TOKEN_DEFAULT = "${{ github.token }}"


def _action_inputs() -> dict[str, dict[str, Any]]:
    return yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))["inputs"]


def _as_input(value: Any) -> str:
    """A model default as action.yml writes it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return "" if value is None else str(value)


def test_action_inputs_are_the_models_inputs() -> None:
    declared = _action_inputs()
    model = {name for name, spec in OPTIONS.items() if spec.option.input}
    assert set(declared) == model
    for name, entry in declared.items():
        assert str(entry.get("description", "")).strip(), f"{name} has no description"
        assert entry.get("required", False) is False, name


def test_action_yml_defaults_leave_room_for_adk_eval_yaml() -> None:
    """An input with a default always reaches the action (the runner sets it), so an option
    adk-eval.yaml can set must default to "" there, or the file is never read; the others
    must say the model's default."""
    for name, entry in _action_inputs().items():
        spec = OPTIONS[name]
        default = str(entry.get("default", ""))
        if name == "github_token":
            assert default == TOKEN_DEFAULT
        elif spec.option.config is not None:
            assert default == "", f"{name}: adk-eval.yaml's {spec.option.config} is hidden"
        else:
            assert default == _as_input(spec.default), name


def test_action_yml_names_every_choice() -> None:
    for name, entry in _action_inputs().items():
        for choice in OPTIONS[name].choices:
            assert f"`{choice}`" in entry["description"], f"{name}: `{choice}` not described"


def _params(command: click.Command) -> dict[str, click.Parameter]:
    return {p.name: p for p in command.params if p.name}


@pytest.mark.parametrize("command", ["run", "compare"])
def test_cli_flags_are_the_models(command: str) -> None:
    params = _params(main.commands[command])
    for name, spec in OPTIONS.items():
        if command not in spec.option.commands:
            assert name not in params or name == "baseline", (command, name)
            continue
        param = params[name]
        if spec.option.argument:
            assert isinstance(param, click.Argument) and param.nargs == -1
            continue
        assert param.default is None, name  # not given unless given: resolve() decides
        assert isinstance(param, click.Option)
        assert spec.flag in param.opts, name
        assert param.help == spec.option.help
        if spec.choices:
            assert isinstance(param.type, click.Choice)
            assert tuple(param.type.choices) == spec.choices
        if spec.base_type is bool:
            names = (spec.flag, *spec.option.aliases)
            assert param.secondary_opts == ["--no-" + flag[2:] for flag in names]


@pytest.mark.parametrize(("args", "expected"), [
    (["--changed-only"], True), (["--only-changed"], True), (["--no-only-changed"], False),
    ([], None),
])
def test_run_takes_the_action_inputs_name_for_only_changed(args: list[str], expected) -> None:
    """`run --only-changed` is the action's `only_changed`, beside `--changed-only`."""
    assert OPTIONS["only_changed"].option.input  # the action input keeps its name
    context = main.commands["run"].make_context("run", list(args))
    assert context.params["only_changed"] is expected


def test_run_flags_keep_their_names() -> None:
    """The CLI's flags as documented in docs/cli.md (names unchanged by the model)."""
    flags = {o for p in main.commands["run"].params for o in p.opts if o.startswith("--")}
    assert flags >= {
        "--config", "--baseline", "--record", "--base-ref", "--artifact-name",
        "--baseline-rerun", "--results-out", "--comment-out", "--summary-out",
        "--print-comment", "--num-runs", "--parallelism", "--template", "--fail-on",
        "--max-regression", "--min-effect", "--require-significance", "--max-token-increase",
        "--on-token-increase", "--min-pass-rate", "--gate-mode", "--not-evaluated",
    }


def _synopsis() -> dict[str, str]:
    """docs/cli.md's synopsis: each command's lines (its first and the indented ones)."""
    page = (ACTION_YML.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    usage = page.split("## The CLI", 1)[1].split("```", 2)[1]
    commands: dict[str, str] = {}
    name = ""
    for line in usage.splitlines():
        if line.startswith("adk-eval-action "):
            name = line.split()[1]
            commands[name] = ""
        if name:
            commands[name] += line.split("#", 1)[0] + "\n"
    return commands


@pytest.mark.parametrize("command", sorted(set(main.commands) - {"action"}))
def test_the_readme_synopsis_is_the_commands_options(command: str) -> None:
    """docs/cli.md's synopsis names every option of each command (an on/off flag by its
    first form; its --no- form where written) and nothing else, so it cannot drift from
    click's options again (`action`'s flags are the inputs: test_action_flags_are_the_inputs).
    compare's "the gate options of run" stands for the gate options (settings.OPTIONS)."""
    synopsis = _synopsis()
    assert command in synopsis, f"{command} is not in docs/cli.md's synopsis"
    text = synopsis[command]
    options = [p for p in main.commands[command].params
               if isinstance(p, click.Option) and not p.hidden]
    accepted = {o for p in options for o in (*p.opts, *p.secondary_opts)}
    gate_flags = {spec.flag for spec in OPTIONS.values() if spec.gate}
    shown = set(re.findall(r"--[a-z][a-z-]+", text))
    if "the gate options of run" in text:
        shown |= gate_flags & accepted
    assert shown <= accepted, f"not options of {command}: {shown - accepted}"
    missing = [p.opts[-1] for p in options if not shown & {*p.opts}]
    assert not missing, f"options of {command} missing from docs/cli.md's synopsis: {missing}"


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_option_says_what_it_does(command: str) -> None:
    """`adk-eval-action COMMAND --help` explains every option (`render --template` had none)."""
    silent = [p.opts[-1] for p in main.commands[command].params
              if isinstance(p, click.Option) and not p.hidden and not (p.help or "").strip()]
    assert not silent, f"options of {command} without help: {silent}"


def test_action_flags_are_the_inputs() -> None:
    params = _params(action_command)
    inputs = {name for name, spec in OPTIONS.items() if spec.option.input}
    assert set(params) - {"skip_requirements", "install_failures"} == inputs
    for name in inputs:
        assert OPTIONS[name].input_flag in params[name].opts
    # The fork recipe's command takes a few of the same options, by the same names.
    assert set(_params(comment_command)) - {"artifact", "pr_number", "head_sha"} <= inputs


def test_gate_options_are_gate_config_fields() -> None:
    gate = {spec.field for spec in OPTIONS.values() if spec.gate}
    assert gate == set(GateConfig.model_fields) - {"metrics"}
    assert OPTIONS["gate_mode"].field == "mode"


# --------------------------------------------------------------------------- precedence


def _project(tmp_path: Path, text: str) -> ProjectConfig:
    path = tmp_path / "adk-eval.yaml"
    path.write_text(text)
    return load_project_config(path)


def test_precedence_flags_inputs_file_defaults(tmp_path: Path) -> None:
    project = _project(tmp_path, "parallelism: 7\nnum_runs: 2\ngate: {fail_on: any}\n")
    assert resolve().parallelism == 4 and resolve().gate.fail_on == "threshold"
    from_file = resolve(project)
    assert (from_file.parallelism, from_file.num_runs, from_file.gate.fail_on) == (7, 2, "any")
    assert from_file.source("parallelism") == "config"
    from_input = resolve(project, {"parallelism": "3", "fail_on": "none"})
    assert (from_input.parallelism, from_input.num_runs, from_input.gate.fail_on) == (
        3, 2, "none")
    from_flag = resolve(project, {"parallelism": "3"}, {"parallelism": 5})
    assert from_flag.parallelism == 5 and from_flag.source("parallelism") == "flag"
    assert from_flag.explicit("parallelism") == 5 and from_flag.explicit("num_runs") is None


def test_empty_values_are_not_given(tmp_path: Path) -> None:
    project = _project(tmp_path, "parallelism: 7\ngate: {min_effect: 0.1}\n")
    settings = resolve(project, {"parallelism": "", "min_effect": ""},
                       {"parallelism": None, "paths": ()})
    assert (settings.parallelism, settings.gate.min_effect) == (7, 0.1)
    assert settings.paths == [Path(".")]


def test_per_metric_rules_come_from_the_file(tmp_path: Path) -> None:
    project = _project(tmp_path, "gate:\n  max_regression: 0.2\n  metrics:\n"
                                 "    acc: {max_regression: 0.0}\n")
    gate = resolve(project, flags={"max_regression": 0.1}).gate
    assert gate.max_regression == 0.1
    assert gate.rule_for("s", "acc").max_regression == 0.0
    assert gate.rule_for("s", "other").max_regression == 0.1


def test_inputs_as_the_runner_gives_them() -> None:
    env = {"INPUT_BASELINE-RERUN": "TRUE", "INPUT_GATE_MODE": " Mean ",
           "INPUT_REQUIREMENTS": "a.txt\nb/pyproject.toml", "INPUT_RECORD": "false",
           "GITHUB_TOKEN": "ghs_fallback"}
    settings = resolve(None, read_inputs(env))
    assert settings.baseline_rerun is True and settings.record is False
    assert settings.gate.mode == "mean"
    assert settings.requirements == ["a.txt", "b/pyproject.toml"]
    assert settings.token == "ghs_fallback" and "ghs_fallback" not in repr(read_inputs(env))


@pytest.mark.parametrize(
    ("inputs", "flags", "says"),
    [
        ({"num_runs": "0"}, {}, "invalid input num_runs: Input should be greater than or equal"),
        ({}, {"gate_mode": "median"}, "invalid option --gate-mode: Input should be 'status'"),
        ({"max_regression": "inf"}, {}, "invalid input max_regression: .*finite"),
        ({"comment": "maybe"}, {}, "invalid input comment: Input should be 'update'"),
        ({}, {"results_path": Path("x"), "parallelism": 0},
         "invalid option --parallelism: Input should be greater"),
        ({"num_runs": "1000000000"}, {},
         "invalid input num_runs: Input should be less than or equal to 1000"),
        ({"adaptive_runs": "1001"}, {}, "invalid input adaptive_runs: .*less than or equal"),
        ({"parallelism": "100000"}, {}, "invalid input parallelism: .*less than or equal"),
        ({"shard": "1/1000"}, {}, "invalid input shard: .*less than or equal to 256"),
    ],
)
def test_bad_values_name_where_they_came_from(inputs, flags, says) -> None:
    with pytest.raises(ConfigError, match=says):
        resolve(None, inputs, flags)


@pytest.mark.parametrize("text", ["num_runs: 1000000000", "parallelism: 100000",
                                  "models: {m: {max_concurrency: 100000}}",
                                  "suites: [{name: s, agent: a, eval_sets: [x], "
                                  "num_runs: 5000}]"])
def test_adk_eval_yaml_bounds_runs_and_parallelism(tmp_path: Path, text: str) -> None:
    (tmp_path / "adk-eval.yaml").write_text(text + "\n")
    with pytest.raises(ConfigError, match="less than or equal to 1000"):
        load_request(tmp_path, {}, {})


@pytest.mark.parametrize(("text", "field", "says"), [
    ("num_run: 2", "num_run", "unknown key `num_run`; did you mean `num_runs`?"),
    ("gate:\n  fail_onn: regression", "gate.fail_onn",
     "unknown key `fail_onn`; did you mean `fail_on`?"),
    # A misspelt required key: the misspelling is named, not the key it leaves missing.
    ("suites:\n  - name: a\n    agnet: x", "suites[0].agnet",
     "unknown key `agnet`; did you mean `agent`?"),
    ("gate:\n  metrics:\n    m:\n      threshhold: 1", "gate.metrics.m.threshhold",
     "unknown key `threshhold`; accepted here: max_regression, min_effect, "
     "require_significance"),
])
def test_adk_eval_yaml_typos_name_the_key_meant(
    tmp_path: Path, text: str, field: str, says: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        _project(tmp_path, text)
    assert str(raised.value) == f"{tmp_path / 'adk-eval.yaml'} (field `{field}`): {says}"


def test_load_request_finds_the_config_in_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "adk-eval.yml").write_text("parallelism: 9\n")
    request = load_request(tmp_path)
    assert request.config_path == tmp_path.resolve() / "adk-eval.yml"
    assert request.settings.parallelism == 9 and request.workdir == tmp_path.resolve()
    (tmp_path / "other.yaml").write_text("parallelism: 2\n")
    assert load_request(tmp_path, {"config": "other.yaml"}).settings.parallelism == 2
    assert load_request(tmp_path / ".", flags={"config": Path("other.yaml")},
                        inputs={"config": "adk-eval.yml"}).settings.parallelism == 2


def test_defaults_are_declared_once() -> None:
    """The defaults the docs state, read from the one model."""
    settings = RunSettings()
    assert (settings.parallelism, settings.num_runs, str(settings.baseline)) == (4, 1, "auto")
    assert settings.artifact_name == "adk-eval-results"
    assert settings.results_path == Path("adk-eval-results.json")
    assert ProjectConfig().parallelism is None and ProjectConfig().num_runs is None
