"""Integration tests: agents run through real google-adk (LocalEvalService, its evaluators and
judge prompts) with the stand-in models and the local fake Gemini API, one or more stages
called in-process."""
