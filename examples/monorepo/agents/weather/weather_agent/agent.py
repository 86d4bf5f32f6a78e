"""The forecast agent of the monorepo example, on ``gemini-2.5-flash``.

Offline, its calls go to the local fake of the Gemini API, which answers this instruction
from ``examples/gemini_fake.yaml`` (a call of ``get_forecast``, then the forecast). A
test/demo fixture for adk-eval-action, not a template for real agents.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent

# Fixed so that every score is reproducible.
_FORECASTS: dict[str, tuple[str, int]] = {"Paris": ("sunny", 24), "Oslo": ("snowy", -3)}

INSTRUCTION = (
    "You are a forecaster. Look the forecast up with get_forecast and give the sky and the "
    "temperature in degrees Celsius in one sentence."
)


def get_forecast(city: str) -> dict[str, Any]:
    """Tomorrow's forecast for a city.

    Args:
        city: City name (Paris or Oslo), matched case-insensitively.

    Returns:
        ``{"city", "sky", "celsius"}``, or ``{"error"}`` for an unknown city.
    """
    name = city.strip().title()
    if name not in _FORECASTS:
        return {"error": f"no forecast for {city!r}"}
    sky, celsius = _FORECASTS[name]
    return {"city": name, "sky": sky, "celsius": celsius}


root_agent = LlmAgent(
    name="weather_agent", model="gemini-2.5-flash", instruction=INSTRUCTION,
    tools=[get_forecast],
)
