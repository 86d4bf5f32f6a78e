"""ADK's file formats: eval sets (every shape ADK reads), eval configs and their criteria,
rubrics, ADK's own eval history files, and the checks and conversions between them and
the results format. Imports nothing of the other adk/ sub-packages but ``adk.compat``."""
