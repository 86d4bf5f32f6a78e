"""The travel example agent with deliberate regressions (see examples/README.md)."""

from . import agent  # noqa: F401  # ADK's loader reads ``<package>.agent.root_agent``.
