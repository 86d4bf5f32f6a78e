"""adk-eval-action: run google-adk evaluations on pull requests, compare with a baseline, gate."""

__version__ = "1.0.0"
