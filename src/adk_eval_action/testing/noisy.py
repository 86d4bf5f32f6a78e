"""A noisy stand-in agent model for calibration checks: :class:`NoisyLlm` (model names
``noisy-*``) answers "yes" to a question with a known probability and "no" otherwise, from a
seeded random stream, so the same agent compared with itself shows only run-to-run noise.
A test/benchmark tool only (no LLM is reachable offline); registers nothing on import.

The probability is read from the question: "Question 7 (p=0.9)?" is answered "yes" with
probability 0.9, less ``ADK_EVAL_NOISY_DROP`` when that environment variable is set (a
degraded agent). The stream is seeded by ``seed`` and the environment variable
``ADK_EVAL_NOISY_SEED`` and advanced per call; both variables are read per call, so one
process can run the agent under several seeds and degradations.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types as genai_types
from pydantic import PrivateAttr

from adk_eval_action.adk.compat import llm_capabilities
from adk_eval_action.testing.scripted import usage_metadata

SEED_VARIABLE = "ADK_EVAL_NOISY_SEED"
DROP_VARIABLE = "ADK_EVAL_NOISY_DROP"
_PROBABILITY = re.compile(r"\(p=(?P<p>[01](?:\.\d+)?)\)")


class NoisyLlm(BaseLlm):
    """Answers "yes" with the probability in the user text (1.0 when none; less
    ``ADK_EVAL_NOISY_DROP``), else "no"; one draw per call from a stream seeded by
    ``seed`` and ``ADK_EVAL_NOISY_SEED``."""

    seed: int = 0
    _streams: dict[str, random.Random] = PrivateAttr(default_factory=dict)

    @classmethod
    def supported_models(cls) -> list[str]:
        """Returns the model-name regexes this class is registered for."""
        return [r"noisy-.*"]

    @property
    def capabilities(self) -> Any:
        """Declares capabilities outright, avoiding ADK's name-based fallback (None where
        google-adk has no ``LlmCapabilities``)."""
        return llm_capabilities(output_schema_and_tools=False)

    def _stream(self) -> random.Random:
        key = os.environ.get(SEED_VARIABLE, "0")
        if key not in self._streams:
            self._streams[key] = random.Random(f"{self.seed}/{key}")
        return self._streams[key]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Yields one "yes" or "no" text reply (see the class docstring)."""
        text = " ".join(
            part.text or ""
            for content in llm_request.contents
            if content.role == "user"
            for part in content.parts or []
        )
        match = _PROBABILITY.search(text)
        p = float(match.group("p")) if match else 1.0
        p -= float(os.environ.get(DROP_VARIABLE) or 0.0)
        answer = "yes" if self._stream().random() < p else "no"
        part = genai_types.Part(text=answer)
        yield LlmResponse(
            content=genai_types.Content(role="model", parts=[part]),
            usage_metadata=usage_metadata(llm_request, [part]),
        )
