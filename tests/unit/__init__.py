"""Unit tests by stage (analysis, report, results, github, run, adk, settings): one stage on
hand-built values, no agent run."""
