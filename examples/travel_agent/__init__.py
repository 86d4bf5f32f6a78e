"""Offline example ADK agent: a travel assistant driven by a scripted stand-in model."""

from . import agent  # noqa: F401  # ADK's loader reads ``<package>.agent.root_agent``.
