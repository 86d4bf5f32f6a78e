"""The travel example agent with a regressed instruction, for comparison demos.

Same model (``gemini-2.5-flash``), tools and eval sets as ``travel_agent``; only the
instruction changed ("Be blunt ..."), and with it what the model does (offline, the local
fake of the Gemini API answers this instruction from the regressed rules of
``examples/gemini_fake.yaml``), each regression showing in one metric:

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
from travel_agent.agent import INSTRUCTION, convert_currency, get_weather

root_agent = LlmAgent(
    name="travel_agent",
    model="gemini-2.5-flash",
    instruction=INSTRUCTION + " Be blunt: users should not need a travel assistant.",
    tools=[get_weather, convert_currency],
)
