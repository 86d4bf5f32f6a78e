"""A live (bidirectional streaming) connection for :class:`~.scripted.ScriptedLlm`, so an
agent evaluated as google-adk's live evaluation runs it (an eval config's
``live_model_config``: ``LocalEvalService`` with ``InferenceConfig(use_live=True)``, its
``_LiveSession`` and the live LLM flow) can run offline.

The connection answers each user content with what the scripted model answers in text mode
(the same rules), then a ``turn_complete`` response, as a Live API model ends a turn. A
function response is answered once: google-adk 2.13's live evaluation sends a tool's
response back to the model twice (the flow as a ``user`` content, the evaluation as a
``tool`` one), and a Live API model answers a tool call once. Audio (``send_realtime``) is
not transcribed: a scripted agent hears text only.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from google.adk.models.base_llm_connection import BaseLlmConnection
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types as genai_types

Answer = Callable[[LlmRequest], AsyncGenerator[LlmResponse, None]]
"""The scripted model's text-mode answer to a request."""


class ScriptedLiveConnection(BaseLlmConnection):
    """One live session of a scripted model (module docstring).

    Args:
        answer: The model's text-mode answer to the whole conversation so far.
        request: The request the session was opened with (its config; its contents are
            the history until ``send_history``).
    """

    def __init__(self, answer: Answer, request: LlmRequest) -> None:
        self._answer = answer
        self._config = request.config
        self._history: list[genai_types.Content] = list(request.contents or [])
        self._responses: asyncio.Queue[LlmResponse | None] = asyncio.Queue()
        self._answered_calls: set[str] = set()
        self._closed = False

    async def send_history(self, history: list[genai_types.Content]) -> None:
        """Replaces the conversation; answers when its last content is the user's."""
        self._history = list(history)
        if history and history[-1].role == "user":
            await self._respond()

    async def send_content(self, content: genai_types.Content) -> None:
        """Adds ``content`` to the conversation and answers it (a function response whose
        call was answered already is kept, not answered again)."""
        ids = {p.function_response.id or p.function_response.name or ""
               for p in content.parts or [] if p.function_response}
        if ids and ids <= self._answered_calls:
            return
        self._answered_calls |= ids
        self._history.append(content)
        await self._respond()

    async def send_realtime(self, blob: Any) -> None:
        """Audio and video are not heard by a scripted model."""
        del blob

    async def _respond(self) -> None:
        request = LlmRequest(contents=list(self._history), config=self._config)
        async for response in self._answer(request):
            if response.content is not None:
                self._history.append(response.content)
            await self._responses.put(response)
        await self._responses.put(LlmResponse(turn_complete=True))

    async def receive(self) -> AsyncGenerator[LlmResponse, None]:
        """Yields the answers as they are made; returns once the connection is closed."""
        while not self._closed:
            response = await self._responses.get()
            if response is None:
                return
            yield response

    async def close(self) -> None:
        """Ends the session: a pending :meth:`receive` returns, and every later one."""
        self._closed = True
        await self._responses.put(None)


@asynccontextmanager
async def scripted_connection(answer: Answer, request: LlmRequest
                              ) -> AsyncIterator[ScriptedLiveConnection]:
    """A :class:`ScriptedLiveConnection`, closed when the block ends."""
    connection = ScriptedLiveConnection(answer, request)
    try:
        yield connection
    finally:
        await connection.close()
