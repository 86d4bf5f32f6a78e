"""A small travel assistant that runs fully offline.

The agent uses :class:`adk_eval_action.testing.standins.ScriptedLlm` instead of a real
model because no LLM is reachable offline; its replies are scripted so that
the agent passes every case in ``eval/travel.evalset.json``.
``register_standins()`` below registers the ``stand-in-judge`` model that
``eval/test_config.json`` uses for the rubric metric.

This is a test/demo fixture for adk-eval-action, not a template for real agents.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent

from adk_eval_action.testing.standins import (
    ScriptedLlm,
    ScriptedToolCall,
    ScriptRule,
    register_standins,
)

# The eval config names the `stand-in-judge` model: ADK's LLMRegistry must know it before
# the evaluation asks for it.
register_standins()

# Fixed table so the tool output (and thus every eval score) is reproducible.
_WEATHER: dict[str, tuple[str, int]] = {
    "Paris": ("sunny", 22),
    "London": ("rainy", 14),
    "Tokyo": ("cloudy", 18),
}

# Units of each currency per 1 USD; fixed so conversions are reproducible.
_PER_USD: dict[str, float] = {"USD": 1.0, "EUR": 0.9, "GBP": 0.8, "JPY": 150.0}


def get_weather(city: str) -> dict[str, Any]:
    """Returns the current weather for a city.

    Args:
        city: City name, matched case-insensitively (Paris, London or Tokyo).

    Returns:
        On success ``{"status": "success", "city", "condition",
        "temperature_c"}`` (temperature in degrees Celsius); for an unknown
        city ``{"status": "error", "error_message"}``.
    """
    name = city.strip().title()
    if name not in _WEATHER:
        return {"status": "error", "error_message": f"No weather data for {city!r}."}
    condition, temperature_c = _WEATHER[name]
    return {
        "status": "success",
        "city": name,
        "condition": condition,
        "temperature_c": temperature_c,
    }


def convert_currency(amount: float, from_currency: str, to_currency: str) -> dict[str, Any]:
    """Converts an amount between currencies at fixed demo rates.

    Args:
        amount: Amount in ``from_currency``.
        from_currency: ISO code, one of USD, EUR, GBP, JPY (case-insensitive).
        to_currency: ISO code, one of USD, EUR, GBP, JPY (case-insensitive).

    Returns:
        On success ``{"status": "success", "amount", "from_currency",
        "to_currency", "converted_amount"}`` (rounded to 2 decimals); for an
        unknown currency ``{"status": "error", "error_message"}``.
    """
    source, target = from_currency.strip().upper(), to_currency.strip().upper()
    unknown = [code for code in (source, target) if code not in _PER_USD]
    if unknown:
        return {"status": "error", "error_message": f"Unknown currency: {', '.join(unknown)}."}
    converted = round(amount / _PER_USD[source] * _PER_USD[target], 2)
    return {
        "status": "success",
        "amount": amount,
        "from_currency": source,
        "to_currency": target,
        "converted_amount": converted,
    }


WEATHER_PATTERN = r"weather (?:like )?in (?P<city>[a-z][a-z ]*?)\s*(?:[?.!,]|$)"
CURRENCY_PATTERN = (
    r"convert (?P<amount>\d+(?:\.\d+)?) (?P<from_currency>[a-z]{3}) to (?P<to_currency>[a-z]{3})"
)
THANKS_PATTERN = r"\b(?:thanks|thank you|bye)\b"

WEATHER_REPLY = (
    "Happy to help! It is {result[condition]} in {result[city]}"
    " at {result[temperature_c]} degrees Celsius."
)
CURRENCY_REPLY = (
    "Happy to help! {amount} {result[from_currency]} is"
    " {result[converted_amount]:.2f} {result[to_currency]}."
)
THANKS_REPLY = "You're welcome, happy to help! Have a great trip."

INSTRUCTION = (
    "You are a travel assistant. Use get_weather for weather questions and"
    " convert_currency for currency conversions. Answer briefly and politely."
)

WEATHER_RULE = ScriptRule(
    pattern=WEATHER_PATTERN,
    tool_calls=[ScriptedToolCall(name="get_weather", args={"city": "{city}"})],
    reply=WEATHER_REPLY,
)
CURRENCY_RULE = ScriptRule(
    pattern=CURRENCY_PATTERN,
    tool_calls=[
        ScriptedToolCall(
            name="convert_currency",
            args={
                "amount": "{amount}",
                "from_currency": "{from_currency}",
                "to_currency": "{to_currency}",
            },
        )
    ],
    reply=CURRENCY_REPLY,
)
THANKS_RULE = ScriptRule(pattern=THANKS_PATTERN, reply=THANKS_REPLY)
DEFAULT_REPLY = "Happy to help with weather and currency questions, please ask about one."

root_agent = LlmAgent(
    name="travel_agent",
    model=ScriptedLlm(
        model="scripted-travel",
        # Thanks comes last: "Thanks! What's the weather in Paris?" is a weather question.
        rules=[WEATHER_RULE, CURRENCY_RULE, THANKS_RULE],
        default_reply=DEFAULT_REPLY,
    ),
    instruction=INSTRUCTION,
    tools=[get_weather, convert_currency],
)
