"""The travel example agent with deliberate regressions, for comparison demos.

Same tools, instruction and eval sets as ``travel_agent``; only the scripted
model rules differ, each regression targeting one metric:

* "weather in Paris" calls ``get_weather`` with ``city="paris"`` (lower-cased):
  the reply is unchanged but ``tool_trajectory_avg_score`` fails that case.
* "weather in Tokyo" drops the word "Celsius" from the reply, which the
  untyped case-level rubric of ``weather_tokyo_rubrics`` asks for (plain
  ``adk eval`` ignores that rubric; adk-eval-action applies it).
* Currency replies are rude and long (politeness and brevity metrics, and the
  "happy to help" config rubric).

Requires ``examples/`` on ``sys.path`` (``PYTHONPATH=examples``) to import the
tools from ``travel_agent``. A test/demo fixture, not a template.
"""

from __future__ import annotations

from google.adk.agents import LlmAgent
from travel_agent.agent import (
    CURRENCY_RULE,
    DEFAULT_REPLY,
    INSTRUCTION,
    THANKS_RULE,
    WEATHER_REPLY,
    WEATHER_RULE,
    convert_currency,
    get_weather,
)

from adk_eval_action.testing.standins import (
    ScriptedLlm,
    ScriptedToolCall,
    ScriptRule,
    register_standins,
)

# The eval config names the `stand-in-judge` model: ADK's LLMRegistry must know it before
# the evaluation asks for it.
register_standins()

PARIS_WRONG_ARG_RULE = ScriptRule(
    pattern=r"weather (?:like )?in paris\b",
    tool_calls=[ScriptedToolCall(name="get_weather", args={"city": "paris"})],
    reply=WEATHER_REPLY,
)
TOKYO_NO_UNIT_RULE = ScriptRule(
    pattern=r"weather (?:like )?in tokyo\b",
    tool_calls=[ScriptedToolCall(name="get_weather", args={"city": "Tokyo"})],
    reply="Happy to help! It is {result[condition]} in {result[city]}"
    " at {result[temperature_c]} degrees.",
)
RUDE_CURRENCY_RULE = CURRENCY_RULE.model_copy(
    update={
        "reply": (
            "Obviously {amount} {result[from_currency]} is {result[converted_amount]:.2f}"
            " {result[to_currency]}. Whatever, this is a trivial conversion that any"
            " calculator, phone or search engine would have done for you in about a"
            " second, so next time maybe try one of those first before asking me about"
            " exchange rates again."
        )
    }
)

root_agent = LlmAgent(
    name="travel_agent",
    model=ScriptedLlm(
        model="scripted-travel-regressed",
        # The city-specific rules must precede the general weather rule.
        rules=[
            PARIS_WRONG_ARG_RULE,
            TOKYO_NO_UNIT_RULE,
            WEATHER_RULE,
            RUDE_CURRENCY_RULE,
            THANKS_RULE,
        ],
        default_reply=DEFAULT_REPLY,
    ),
    instruction=INSTRUCTION,
    tools=[get_weather, convert_currency],
)
