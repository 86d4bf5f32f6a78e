"""Test and demo tools: offline stand-ins for the models an evaluation calls.

Nothing here is imported by the action itself, and importing this package registers nothing.
"""
