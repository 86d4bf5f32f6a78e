"""The model-call layer: the repository's agent imported as ``adk eval`` does, every model
call it and the judges make (retries, time and size limits, faults, credentials, tokens and
the budget), and why a case run failed. Imports nothing of ``adk.files``."""
