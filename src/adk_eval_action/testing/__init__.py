"""Offline stand-ins for the models an evaluation calls, a public API for testing ADK agents
with no network and no keys (docs/testing.md, "Testing your agent offline"): the fake Gemini API
(``gemini_fake``, answering from ``gemini_script``, with ``gemini_faults``) and the stand-in
models (``standins``: ``ScriptedLlm``, ``StandInJudge``, ``register_standins``). The
repository's own test plumbing (how GitHub's runner starts the action, the REST stand-ins)
is in ``tests/support``, not here.

Nothing here is imported by the action itself, and importing this package registers nothing.
"""
