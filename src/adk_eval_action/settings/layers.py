"""Building :class:`~.model.RunSettings` from its layers (:func:`resolve`), reading the
action's inputs (:func:`read_inputs`), and a run as the pipeline takes it
(:class:`RunRequest`, :func:`load_request`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from adk_eval_action.errors import ConfigError
from adk_eval_action.files import inside_root
from adk_eval_action.git import Git
from adk_eval_action.project.config import (
    ProjectConfig,
    find_project_config,
    load_project_config,
)
from adk_eval_action.project.dependencies import DependencyFailure
from adk_eval_action.redaction import Redactor
from adk_eval_action.settings.run_settings import OPTIONS, OptionSpec, RunSettings, Source


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, tuple)) and not value)


def config_layer(config: ProjectConfig | None) -> dict[str, Any]:
    """The options adk-eval.yaml gives (only the keys present in the file)."""
    if config is None:
        return {}
    values: dict[str, Any] = {}
    for name, spec in OPTIONS.items():
        key = spec.option.config
        if key is None:
            continue
        owner: BaseModel = config
        *parents, last = key.split(".")
        for part in parents:
            owner = getattr(owner, part)
        if last in owner.model_fields_set:
            values[name] = getattr(owner, last)
    return values


def _split_list(value: Any) -> list[str]:
    """Inputs that take several values accept newlines or commas between them."""
    items = value if isinstance(value, (list, tuple)) else [value]
    out: list[str] = []
    for item in items:
        out += [p.strip() for p in str(item).replace(",", "\n").splitlines() if p.strip()]
    return out


def _clean(spec: OptionSpec, value: Any, source: Source) -> Any:
    """An input's text as its field takes it: lists split, choices and booleans lowercase."""
    # Text lists (an input, the action's --paths) split; the CLI's PATHS arguments do not.
    if spec.is_list and source in ("input", "flag") and (
        isinstance(value, str) or all(isinstance(v, str) for v in value)
    ):
        return _split_list(value)
    if isinstance(value, str) and source == "input":
        value = value.strip()
        if spec.choices or spec.base_type is bool:
            return value.lower()
    return value


def resolve(
    config: ProjectConfig | None = None,
    inputs: Mapping[str, Any] | None = None,
    flags: Mapping[str, Any] | None = None,
) -> RunSettings:
    """The settings of a run from its layers: CLI ``flags`` > action ``inputs`` >
    adk-eval.yaml (``config``) > the defaults. Each layer maps flat option names
    (:data:`OPTIONS`) to values; ``None``/empty means not given. ``metrics`` (per-metric
    gate rules) and ``model_retries`` come from ``config`` only.

    Raises:
        ConfigError: a value is invalid; the message names the flag, input or config key.
        KeyError: a layer names no option (a programming error).
    """
    layers: dict[Source, Mapping[str, Any]] = {
        "config": config_layer(config), "input": inputs or {}, "flag": flags or {},
    }
    merged: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    for source, layer in layers.items():
        for name, value in layer.items():
            spec = OPTIONS[name]
            if not _absent(value):
                merged[name] = _clean(spec, value, source)
                sources[name] = source
    data: dict[str, Any] = {n: v for n, v in merged.items() if not OPTIONS[n].gate}
    gate = {OPTIONS[n].field: v for n, v in merged.items() if OPTIONS[n].gate}
    data["gate"] = {"metrics": config.gate.metrics, **gate} if config else gate
    if config is not None:
        data["model_retries"] = config.model_retries
    try:
        settings = RunSettings.model_validate(data)
    except ValidationError as e:
        raise _error(e, sources) from e
    settings._sources = sources
    return settings


def _error(error: ValidationError, sources: Mapping[str, Source]) -> ConfigError:
    first = error.errors()[0]
    loc = [str(p) for p in first["loc"]]
    field = loc[1] if loc[0] == "gate" and len(loc) > 1 else loc[0]
    name = next((n for n, s in OPTIONS.items() if s.field == field
                 and s.gate == (loc[0] == "gate")), field)
    spec = OPTIONS.get(name)
    where = {
        "flag": f"invalid option {spec.flag if spec else name}",
        "input": f"invalid input {name}",
        "config": f"adk-eval.yaml {spec.option.config if spec else name}",
    }.get(sources.get(name, "default"), f"invalid setting {name}")
    return ConfigError(where, first["msg"])


# --------------------------------------------------------------------------- a run


class RunRequest(BaseModel):
    """A run as the pipeline takes it: the settings, resolved once (:func:`load_request`),
    the adk-eval.yaml they were resolved with, and the working directory every relative
    path is relative to. Where the run is published (the GitHub side: the event, the job
    summary, the comment's bound) is not here: the entry point gives it to the pipeline
    beside the request (``github.publish.PublishTarget``).

    ``secrets`` are the values redacted from everything the run writes
    (``redaction.secret_values`` of the environment, and the token); ``root`` is the
    repository root every repository path must stay inside (the git top level of the
    working directory, else the working directory). ``dependency_failures`` are the suites
    whose own dependencies the action could not install (``run.requirements.
    install_suite_requirements``), by name: they are recorded as incomplete, not run.
    """

    model_config = ConfigDict(frozen=True)

    settings: RunSettings
    workdir: Path
    project: ProjectConfig = Field(default_factory=ProjectConfig)
    config_path: Path | None = None
    secrets: tuple[SecretStr, ...] = ()
    root: Path | None = None
    dependency_failures: dict[str, DependencyFailure] = Field(default_factory=dict)

    @property
    def redactor(self) -> Redactor:
        """Redacts :attr:`secrets` from text (results, comment, summary, log lines)."""
        return Redactor(s.get_secret_value() for s in self.secrets)

    @property
    def repository_root(self) -> Path:
        """:attr:`root`, else the working directory."""
        return self.root or self.workdir

    def path(self, path: Path) -> Path:
        """``path`` (a setting's, relative to the working directory) as the process sees
        it: absolute."""
        return path if path.is_absolute() else self.workdir / path


def load_request(
    workdir: Path,
    inputs: Mapping[str, Any] | None = None,
    flags: Mapping[str, Any] | None = None,
    secrets: Iterable[str] = (),
    read_config: bool = True,
) -> RunRequest:
    """The run in ``workdir``: its adk-eval.yaml found and read (the ``config`` option as
    a flag or input gives it, else
    :data:`~adk_eval_action.project.config.PROJECT_CONFIG_NAMES` in ``workdir``; not when
    ``read_config`` is False: a run that evaluates nothing), and the settings resolved
    over it, once.

    Raises:
        ConfigError: an invalid option, or adk-eval.yaml is unreadable or invalid.
        OutsideRoot: the config, the template or a path resolves outside the repository
            root (:func:`repository_root`).
    """
    workdir = workdir.resolve()
    root = repository_root(workdir)
    path = _config_path(workdir, inputs, flags) if read_config else None
    if path is not None:
        path = inside_root(path, root, "config")
    try:
        project = load_project_config(path) if path is not None else ProjectConfig(root=workdir)
    except ConfigError as e:
        raise e.relative_to(root) from e
    settings = resolve(project if read_config else None, inputs, flags)
    for what, given in [("template", settings.template)] + [
            ("path", p) for p in settings.paths]:
        if given is not None:
            inside_root(workdir / given, root, what)
    return RunRequest(
        settings=settings, workdir=workdir, project=project, config_path=path,
        secrets=tuple(SecretStr(s) for s in secrets), root=root,
    )


def _config_path(
    workdir: Path, inputs: Mapping[str, Any] | None, flags: Mapping[str, Any] | None,
) -> Path | None:
    """The adk-eval.yaml of a run in ``workdir``: the ``config`` option (a flag wins over
    an input; the file itself cannot name it), else the one found in ``workdir``."""
    for layer in (flags or {}, inputs or {}):
        given = layer.get("config")
        if not _absent(given) and str(given).strip():
            return workdir / Path(str(given).strip())
    return find_project_config(workdir)


#: The options that say where a run's results, comment and summary go and how the comment
#: is posted: enough to record an error that stopped the run (:func:`fallback_request`).
PUBLISHING_OPTIONS = (
    "results_path", "comment_out", "summary_out", "print_comment", "comment", "comment_key",
    "github_token", "working_directory", "shard", "comment_artifact",
)


def where_settings(
    inputs: Mapping[str, Any] | None = None, flags: Mapping[str, Any] | None = None,
) -> RunSettings:
    """The settings of the :data:`PUBLISHING_OPTIONS` alone (the other options at their
    defaults): where a run works and writes, read before its adk-eval.yaml (which sets none
    of them) is found, so that a working directory outside the checkout is refused before
    any of its files is read.

    Raises:
        ConfigError: one of these options is invalid.
    """
    def kept(layer: Mapping[str, Any] | None) -> dict[str, Any]:
        return {k: v for k, v in (layer or {}).items() if k in PUBLISHING_OPTIONS}

    return resolve(None, kept(inputs), kept(flags))


def publishing_settings(
    inputs: Mapping[str, Any] | None = None, flags: Mapping[str, Any] | None = None,
) -> RunSettings | None:
    """:func:`where_settings`, or None when one of these options is invalid too."""
    try:
        return where_settings(inputs, flags)
    except ConfigError:
        return None


def fallback_request(
    workdir: Path,
    inputs: Mapping[str, Any] | None = None,
    flags: Mapping[str, Any] | None = None,
    secrets: Iterable[str] = (),
) -> RunRequest | None:
    """The run as far as recording an error needs it, when :func:`load_request` refused the
    run: the :data:`PUBLISHING_OPTIONS` of ``inputs`` and ``flags`` alone (adk-eval.yaml
    sets none of them), so an invalid adk-eval.yaml or another option's bad value still
    leaves a results file and a comment saying why. None when even these are invalid or
    ``workdir`` is not a folder: the error is then only logged (docs/action.md)."""
    settings = publishing_settings(inputs, flags)
    if settings is None or not workdir.is_dir():
        return None
    workdir = workdir.resolve()
    return RunRequest(settings=settings, workdir=workdir, root=repository_root(workdir),
                      secrets=tuple(SecretStr(s) for s in secrets))


def repository_root(workdir: Path) -> Path:
    """The git top level that holds ``workdir``, else ``workdir`` itself."""
    top = Git(workdir, timeout=10).value("rev-parse", "--show-toplevel")
    return Path(top).resolve() if top else workdir.resolve()


# --------------------------------------------------------------------------- inputs


def read_inputs(env: Mapping[str, str]) -> dict[str, Any]:
    """The action inputs set in ``env`` (``INPUT_*``), by option name; unset and empty
    inputs are left out. The token falls back to ``GITHUB_TOKEN`` (plain ``run:`` steps).

    The runner uppercases an input's name and keeps hyphens (``INPUT_NUM-RUNS``; GitHub's
    "Metadata syntax", https://docs.github.com/en/actions/reference/workflows-and-actions/metadata-syntax#inputs);
    both spellings are read so either style in a caller's ``with:`` works.
    """
    inputs: dict[str, str] = {}
    for name, spec in OPTIONS.items():
        if not spec.option.input:
            continue
        upper = name.upper()
        for key in (f"INPUT_{upper}", f"INPUT_{upper.replace('_', '-')}"):
            value = env.get(key)
            if value is not None and value.strip():
                inputs[name] = value.strip()
                break
    if "github_token" not in inputs and env.get("GITHUB_TOKEN"):
        inputs["github_token"] = env["GITHUB_TOKEN"]
    return hide_secrets(inputs)


def hide_secrets(layer: Mapping[str, Any]) -> dict[str, Any]:
    """``layer`` with the values of secret options (the token) as SecretStr, so that no
    repr, log line or error message of the layer can show them."""
    return {
        name: SecretStr(value) if isinstance(value, str)
        and OPTIONS[name].base_type is SecretStr else value
        for name, value in layer.items()
    }
