"""Tokens and dollars: what the models of a run reported using, and what that cost at the
prices the user gave.

Tokens are the models' own counts, as each answer reports them: google-genai's
``GenerateContentResponseUsageMetadata`` (``prompt_token_count``,
``cached_content_token_count``, ``candidates_token_count``, ``thoughts_token_count``,
``tool_use_prompt_token_count``), which google-adk's ``LiteLlm`` also fills from LiteLLM's
``usage`` (``prompt_tokens``, ``completion_tokens``, cached and reasoning tokens where the
provider reports them). Input tokens are the prompt's plus the tool-use prompt's; cached
tokens are the part of the input read from the model's context cache (Gemini's and OpenAI's
prompt counts include them); output tokens are the answer's, thought tokens the model's
reasoning (billed as output by Gemini and OpenAI), each counted once
(:func:`adk_eval_action.adk.runtime.spend.usage_of`).

Dollars come only from prices the user gives in adk-eval.yaml (``models.<name>.
input_usd_per_1m_tokens``, ``output_usd_per_1m_tokens``, optionally
``cached_input_usd_per_1m_tokens``; :class:`~adk_eval_action.project.config.ModelSettings`):
there is no built-in price table to go stale. A model without a price has tokens and no
dollars (``usd`` None), and what shows the totals says which models those are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, Field

from adk_eval_action.project.config import ModelSettings

Role = Literal["agent", "judge", "user_simulator"]
"""Who called a model: the agent under evaluation, a judge, or ADK's user simulator."""

PER_TOKENS = 1_000_000
"""Prices are per million tokens (``*_usd_per_1m_tokens``)."""


class ModelUsage(BaseModel):
    """What one model used in one role (over a case run, a suite or a whole run).

    Attributes:
        model: The model's name as the agent or eval config names it.
        role: ``agent``, ``judge`` or ``user_simulator``.
        calls: Model calls that answered (a call with retries counts once).
        unreported: Of those, calls whose answer reported no usage (their tokens are
            unknown, never zero).
        input_tokens: Prompt tokens (tool-use prompt tokens included; cached ones too).
        cached_tokens: The part of ``input_tokens`` read from the context cache.
        output_tokens: Answer tokens (candidates).
        thoughts_tokens: Reasoning tokens, where the model reports them.
        usd: Dollars at the model's prices (None: adk-eval.yaml gives it no price).
    """

    model: str
    role: Role
    calls: int = Field(default=0, ge=0)
    unreported: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    cached_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    thoughts_tokens: int = Field(default=0, ge=0)
    usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)

    @property
    def tokens(self) -> int:
        """All tokens: input, output and thoughts."""
        return self.input_tokens + self.output_tokens + self.thoughts_tokens

    def add(self, other: ModelUsage) -> None:
        """Adds ``other``'s counts in place; the dollars are the sum when both have them,
        else None (a part without a price leaves the whole without one)."""
        self.calls += other.calls
        self.unreported += other.unreported
        self.input_tokens += other.input_tokens
        self.cached_tokens += other.cached_tokens
        self.output_tokens += other.output_tokens
        self.thoughts_tokens += other.thoughts_tokens
        self.usd = None if self.usd is None or other.usd is None else self.usd + other.usd


def usd_of(usage: ModelUsage, price: ModelSettings | None) -> float | None:
    """The dollars of ``usage`` at ``price`` (the model's settings), or None when the model
    has no price: ``(input - cached) x input + cached x cached_input (the input price when
    not given) + (output + thoughts) x output``, prices per :data:`PER_TOKENS` tokens."""
    if price is None or price.input_usd_per_1m_tokens is None:
        return None
    cached_price = price.cached_input_usd_per_1m_tokens
    if cached_price is None:
        cached_price = price.input_usd_per_1m_tokens
    output_price = price.output_usd_per_1m_tokens or 0.0
    cached = min(usage.cached_tokens, usage.input_tokens)
    dollars = (
        (usage.input_tokens - cached) * price.input_usd_per_1m_tokens
        + cached * cached_price
        + (usage.output_tokens + usage.thoughts_tokens) * output_price
    )
    return dollars / PER_TOKENS


def priced(
    usage: Iterable[ModelUsage], prices: Mapping[str, ModelSettings]
) -> list[ModelUsage]:
    """Copies of ``usage`` with ``usd`` set from ``prices`` (by model name; None for a
    model without a price)."""
    return [u.model_copy(update={"usd": usd_of(u, prices.get(u.model))}) for u in usage]


def merge_usage(*groups: Iterable[ModelUsage]) -> list[ModelUsage]:
    """One entry per (model, role) summing every entry of ``groups``, in order of first
    appearance; the dollars of a (model, role) are None when any entry of it has none."""
    merged: dict[tuple[str, str], ModelUsage] = {}
    for group in groups:
        for entry in group:
            key = (entry.model, entry.role)
            if key in merged:
                merged[key].add(entry)
            else:
                merged[key] = entry.model_copy()
    return list(merged.values())


def by_model(usage: Iterable[ModelUsage]) -> list[ModelUsage]:
    """``usage`` summed per model over its roles (``role`` of the first entry kept)."""
    merged: dict[str, ModelUsage] = {}
    for entry in usage:
        if entry.model in merged:
            merged[entry.model].add(entry)
        else:
            merged[entry.model] = entry.model_copy()
    return list(merged.values())


def total_tokens(usage: Iterable[ModelUsage]) -> int:
    """All tokens of ``usage``."""
    return sum(u.tokens for u in usage)


def total_usd(usage: Iterable[ModelUsage]) -> float | None:
    """The dollars of the entries that have a price; None when none has one."""
    dollars = [u.usd for u in usage if u.usd is not None]
    return sum(dollars) if dollars else None


def unpriced_models(usage: Iterable[ModelUsage]) -> list[str]:
    """The models of ``usage`` without dollars (no price given), each once, in order."""
    return list(dict.fromkeys(u.model for u in usage if u.usd is None))
