"""The order-status agent of the monorepo example, on ``gemini-2.5-flash``: the agent with
a dependency of its own, ``PyYAML`` (``agents/orders/requirements.txt``), which its tool
uses to read the order book. ``adk-eval-action init`` names that file as the suite's
``requirements``, and the action installs it before the suite runs.

Offline, its calls go to the local fake of the Gemini API (``examples/gemini_fake.yaml``).
A test/demo fixture for adk-eval-action, not a template for real agents.
"""

from __future__ import annotations

from typing import Any

import yaml
from google.adk.agents import LlmAgent

ORDER_BOOK = """
A-100: {status: shipped, eta: Monday}
B-200: {status: packing, eta: Friday}
"""

INSTRUCTION = "You are the order desk. Look orders up with order_status and say where they are."


def order_status(order_id: str) -> dict[str, Any]:
    """Where an order is.

    Args:
        order_id: The order's id, such as ``A-100``.

    Returns:
        ``{"order_id", "status", "eta"}``, or ``{"error"}`` for an unknown order.
    """
    book = yaml.safe_load(ORDER_BOOK)
    key = order_id.strip().upper()
    if key not in book:
        return {"error": f"no order {order_id!r}"}
    return {"order_id": key, **book[key]}


root_agent = LlmAgent(
    name="orders_agent", model="gemini-2.5-flash", instruction=INSTRUCTION,
    tools=[order_status],
)
