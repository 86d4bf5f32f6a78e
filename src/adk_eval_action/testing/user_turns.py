"""The one rule of a scripted conversation scenario, shared by the fake user simulator
(:mod:`adk_eval_action.testing.gemini_script`) and the stand-in judge of
``per_turn_user_simulator_quality_v1`` (:mod:`adk_eval_action.testing.judge`): the user
says the items of the conversation plan in order, one per turn, then the stop signal.

Both read google-adk's own prompts (2.13: ``simulation/llm_backed_user_simulator_prompts.py``
and ``simulation/per_turn_user_simulator_quality_prompts.py``), which lay out a
``# Conversation Plan`` and a ``# Conversation History`` of ``user: …`` entries.
"""

from __future__ import annotations

import re

DEFAULT_STOP_SIGNAL = "</finished>"
"""google-adk 2.13's stop signal, when a prompt names none."""

_PLAN_ITEM_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def section(prompt: str, title: str) -> str:
    """The text under ``# title`` up to the next top-level heading (ADK's prompt layout)."""
    found = re.search(rf"^# {re.escape(title)}\n(.*?)(?=^# |\Z)", prompt, re.S | re.M)
    return found.group(1).strip() if found else ""


def normalized(text: str) -> str:
    """``text`` with case and spacing ignored."""
    return " ".join(text.casefold().split())


def next_user_turn(prompt: str, stop_signal: str) -> str:
    """What the user says next: the plan items are the non-empty lines of the prompt's
    "Conversation Plan" (list markers stripped); the next turn is the first item no
    ``user:`` entry of the "Conversation History" equals (case and spacing ignored), or
    ``stop_signal`` when every item was said."""
    plan = [_PLAN_ITEM_MARKER.sub("", line).strip()
            for line in section(prompt, "Conversation Plan").splitlines()]
    said = {
        normalized(entry.split(":", 1)[1])
        for entry in section(prompt, "Conversation History").split("\n\n")
        if entry.startswith("user:")
    }
    return next((item for item in plan if item and normalized(item) not in said), stop_signal)
