"""The evaluation run: google-adk's ``LocalEvalService`` driven case run by case run (the
harness and its recording), verdicts, the scheduler and work pool, the plan and its cost
estimate, the preflight and re-scoring. Built on ``adk.files`` and ``adk.runtime``."""
