"""The front-desk agent of the monorepo example, on ``gemini-2.5-flash``: no tools, short
answers. Offline, its calls go to the local fake of the Gemini API
(``examples/gemini_fake.yaml``). A test/demo fixture for adk-eval-action, not a template
for real agents.
"""

from __future__ import annotations

from google.adk.agents import LlmAgent

root_agent = LlmAgent(
    name="faq_agent", model="gemini-2.5-flash",
    instruction="You are the front desk. Answer questions about the shop in one sentence.",
)
