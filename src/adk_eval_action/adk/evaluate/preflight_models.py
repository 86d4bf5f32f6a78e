"""What the preflight (:mod:`.preflight`) reads and finds: the suite it checks
(:class:`SuiteToCheck`), the models an evaluation will call (:class:`ModelUse`), what cannot
work (:class:`PreflightProblem`), and the two rules every model check shares: whether a model
is ADK's ``Gemini`` on the environment's credentials (:func:`is_google`) and whether a
LiteLLM or OpenAI model lacks its provider's key (:func:`provider_key_problem`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from google.adk.evaluation.eval_config import EvalConfig
from google.adk.models import BaseLlm, Gemini
from pydantic import BaseModel, ConfigDict

from adk_eval_action.adk.runtime.credentials import provider_missing_keys

Kind = Literal["credentials", "agent", "judge", "custom_metric", "config"]
Role = Literal["agent", "judge", "user_simulator"]

class PreflightProblem(BaseModel):
    """One thing that cannot work, with where it is declared.

    Attributes:
        kind: ``credentials``, ``agent``, ``judge``, ``custom_metric`` or ``config``.
        message: What is wrong and what to do, naming the model, metric or variable.
        suite: The suite it belongs to, if any.
        file: The file that declares it (an eval config), if any.
        field: The field in that file (``criteria.x.judge_model_options.judge_model``).
    """

    kind: Kind
    message: str
    suite: str | None = None
    file: str | None = None
    field: str | None = None


class ModelUse(BaseModel):
    """A model an evaluation will call.

    Attributes:
        model: The model name.
        role: ``agent``, ``judge`` or ``user_simulator``.
        where: Who uses it, for people ("agent `travel`", "judge of `metric` in FILE").
        google: Whether it is ADK's ``Gemini`` class (google-genai), whose credentials the
            preflight can check.
        suite: The suite that calls it, when known.
    """

    model: str
    role: Role
    where: str
    google: bool
    suite: str | None = None


class SuiteToCheck(BaseModel):
    """What the preflight reads of one suite.

    Attributes:
        name: The suite's name.
        root_agent: The loaded root agent (None when it did not load: nothing to walk).
        eval_config: ADK's eval config of the suite.
        eval_config_file: The eval config's path for people (None: ADK's default criteria).
        has_scenarios: Whether an eval set of the suite has ``conversation_scenario`` cases.
        scenario_cases: Those cases, ``eval set file: eval id`` (for the message).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    root_agent: Any = None
    eval_config: EvalConfig
    eval_config_file: str | None = None
    has_scenarios: bool = False
    scenario_cases: list[str] = []


class PreflightReport(BaseModel):
    """The preflight's findings: ``problems`` refuse the run; ``models`` are what it found."""

    problems: list[PreflightProblem]
    models: list[ModelUse]

    @property
    def missing_credentials(self) -> bool:
        """Whether a problem is missing model credentials (the fork-PR case)."""
        return any(p.kind == "credentials" for p in self.problems)


def is_google(llm: BaseLlm) -> bool:
    """ADK's ``Gemini`` class (and Gemma), building its own google-genai client from the
    environment: no pre-built ``client`` and no key or credentials in ``client_kwargs``
    (fields of later google-adk 2.x; before, ``Gemini`` always builds its own client)."""
    from google.adk.models.apigee_llm import ApigeeLlm

    if not isinstance(llm, Gemini) or isinstance(llm, ApigeeLlm):
        return False
    if getattr(llm, "client", None) is not None:
        return False
    kwargs = getattr(llm, "client_kwargs", None) or {}
    return not any(kwargs.get(k) for k in ("api_key", "credentials", "http_options"))


def provider_key_problem(
    llm: BaseLlm,
    where: str,
    environ: Mapping[str, str],
    suite: str | None,
    file: str | None = None,
    field: str | None = None,
) -> list[PreflightProblem]:
    """A credentials problem naming the missing variables (never a value), or []."""
    client, missing = provider_missing_keys(llm, environ)
    if not missing:
        return []
    names = " and ".join(missing)
    rule = "litellm.validate_environment" if client == "LiteLLM" else "the openai client"
    return [
        PreflightProblem(
            kind="credentials",
            message=f"{where}: {client} model `{llm.model}` needs {names}, which "
            f"{'is' if len(missing) == 1 else 'are'} not set ({rule}); "
            "set it from a secret, or use another model",
            suite=suite,
            file=file,
            field=field,
        )
    ]
