"""Test and demo tools: offline stand-ins for the models an evaluation calls, and how
GitHub's runner starts the action (``runner``).

Nothing here is imported by the action itself, and importing this package registers nothing.
"""
