"""A small travel assistant on ``gemini-2.5-flash``, as a real ADK agent is written.

Offline (tests, ``scripts/example.sh``, CI) its model calls go through ADK's ``Gemini``
class and google-genai to the local fake of the Gemini API
(``adk_eval_action.testing.gemini_fake``, reached through ``GOOGLE_GEMINI_BASE_URL``), which
answers from ``examples/gemini_fake.yaml``: the rules that make this agent pass every case
of ``eval/travel.evalset.json``. The same fake answers ADK's judge (the rubric metric of
``eval/test_config.json`` uses ADK's default judge, ``gemini-2.5-flash``). With a real
``GOOGLE_API_KEY`` and no base URL it runs on the real Gemini API.

This is a test/demo fixture for adk-eval-action, not a template for real agents.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent

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


INSTRUCTION = (
    "You are a travel assistant. Use get_weather for weather questions and"
    " convert_currency for currency conversions. Answer briefly and politely."
)

root_agent = LlmAgent(
    name="travel_agent",
    model="gemini-2.5-flash",
    instruction=INSTRUCTION,
    tools=[get_weather, convert_currency],
)
