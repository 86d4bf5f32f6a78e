"""adk-eval-action: run google-adk evaluations on pull requests, compare with a baseline, gate."""

__version__ = "0.1.0"
