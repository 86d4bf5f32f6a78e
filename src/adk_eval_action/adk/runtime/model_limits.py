"""Bounds on the model calls in flight: the evaluation's ``parallelism`` across all models,
and per-model ``max_concurrency`` (``models: {gemini-2.5-flash: {max_concurrency: 8}}`` in
adk-eval.yaml), so a judge and an agent that share a quota do not starve each other.

:class:`ModelGate` holds one semaphore for every call (``parallelism`` slots) and one per
limited model name for an evaluation. It puts a :class:`LimitedLlm` in place of each model
ADK would call: the models of the agent tree (``LlmAgent.model``; agents without one
inherit their parent's, as ADK resolves it in ``LlmAgent.canonical_model``) and an
evaluator's judge model (``_judge_model`` in google.adk.evaluation.llm_as_judge and
hallucinations_v1, ``_llm`` in per_turn_user_simulator_quality_v1; ADK has no public hook
for the model an evaluator calls). A call holds a slot of its model, then a slot of the
evaluation, from its request until its last response, so at most ``max_concurrency`` calls
of that model and ``parallelism`` calls in all are in flight across all suites, eval cases
and runs. The model slot is taken first, so a call waiting for its model's quota holds no
slot of the evaluation (and two calls never wait for each other's slot).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from adk_eval_action.adk.runtime.agent import agent_tree


class ModelLimit(BaseModel):
    """Limits of one model (adk-eval.yaml ``models: {NAME: {...}}``): ``max_concurrency``
    calls of it in flight at once."""

    model_config = ConfigDict(extra="forbid")

    max_concurrency: int = Field(ge=1)


class LimitedLlm(BaseLlm):
    """A ``BaseLlm`` that calls ``inner`` once a slot of its model's semaphore (if limited)
    and then one of the evaluation's (if bounded) are free.

    Not registered in ADK's LLMRegistry: it is put in place of a model ADK would call.
    ``model`` is the inner model's name, so ADK records the model the user named.
    """

    inner: BaseLlm
    _slots: asyncio.Semaphore | None = PrivateAttr(default=None)
    _all: asyncio.Semaphore | None = PrivateAttr(default=None)

    @property
    def capabilities(self) -> Any:
        """The inner model's ``LlmCapabilities`` (None where google-adk has none: 1.x, 2.0,
        where nothing asks a model for them; see adk.compat)."""
        return getattr(self.inner, "capabilities", None)

    def connect(self, llm_request: LlmRequest) -> Any:
        """The inner model's live connection (not limited: live calls hold a session)."""
        return self.inner.connect(llm_request)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Holds a slot of the model's semaphore (if limited), then one of the evaluation's
        (if bounded), until the block ends."""
        async with self._slots or contextlib.nullcontext(), self._all or contextlib.nullcontext():
            yield

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """The inner model's responses, with a slot held from the request until the inner
        call is closed (a caller that stops early closes it: ADK's judge returns at its
        first response)."""
        async with self.slot():
            responses = self.inner.generate_content_async(llm_request, stream)
            async with contextlib.aclosing(responses):
                async for response in responses:
                    yield response


class ModelGate:
    """The bounds on one evaluation's model calls (module docstring).

    Args:
        limits: ``max_concurrency`` by model name (as the agent or eval config names it).
        parallelism: Calls of any model in flight at once (None: no bound across models).

    Raises:
        ValueError: ``parallelism`` below 1.
    """

    def __init__(self, limits: Mapping[str, int], parallelism: int | None = None) -> None:
        if parallelism is not None and parallelism < 1:
            raise ValueError(f"parallelism must be at least 1, got {parallelism}")
        self.limits = dict(limits)
        self.parallelism = parallelism
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._all = asyncio.Semaphore(parallelism) if parallelism else None

    @property
    def active(self) -> bool:
        """Whether any call is bounded (a model limit or ``parallelism``)."""
        return bool(self.limits) or self._all is not None

    def wrap(self, llm: BaseLlm) -> BaseLlm:
        """``llm`` behind its model's slots and the evaluation's, or ``llm`` itself when
        neither bounds it (or it is already behind them)."""
        limited_model = llm.model in self.limits
        if isinstance(llm, LimitedLlm) or not (limited_model or self._all):
            return llm
        limited = LimitedLlm(model=llm.model, inner=llm)
        if limited_model:
            limited._slots = self._slots.setdefault(
                llm.model, asyncio.Semaphore(self.limits[llm.model])
            )
        limited._all = self._all
        return limited

    def wrap_agent(self, root_agent: Any) -> None:
        """Wraps the models of the agent tree (module docstring), in place."""
        if not self.active:
            return
        from google.adk.agents import LlmAgent

        for agent in agent_tree(root_agent):
            if isinstance(agent, LlmAgent) and agent.model:
                agent.model = self.wrap(agent.canonical_model)

    def wrap_evaluator(self, evaluator: Any) -> None:
        """Wraps an ADK evaluator's judge model (module docstring), in place."""
        if not self.active:
            return
        from adk_eval_action.adk.compat import replace_judge_model

        replace_judge_model(evaluator, self.wrap)


def slot_and_model(llm: BaseLlm) -> tuple[contextlib.AbstractAsyncContextManager[Any], BaseLlm]:
    """What a caller that times its calls (adk.runtime.model_calls.RetryingLlm) holds, and then
    calls: a :class:`LimitedLlm`'s slot and its inner model, so the time spent waiting for
    the slot is not the call's; for any other model, nothing to hold and the model."""
    if isinstance(llm, LimitedLlm):
        return llm.slot(), llm.inner
    return contextlib.nullcontext(), llm


def agent_model_names(root_agent: Any) -> list[str]:
    """The model names of the agent tree's ``LlmAgent``s that name one, in tree order
    (a name once)."""
    from google.adk.agents import LlmAgent

    names: list[str] = []
    for agent in agent_tree(root_agent):
        model = getattr(agent, "model", None) if isinstance(agent, LlmAgent) else None
        name = model if isinstance(model, str) else getattr(model, "model", None)
        if name and name not in names:
            names.append(name)
    return names
