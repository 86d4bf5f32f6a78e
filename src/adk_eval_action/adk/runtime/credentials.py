"""Whether a model's credentials are there, by the rules of the client that will use them,
read before any call: google-genai's for ADK's ``Gemini`` class
(:func:`missing_google_credentials`) and LiteLLM's own for a ``LiteLlm``
(:func:`litellm_missing_keys`), and the openai client's for google-adk's ``OpenAILlm``
(:func:`openai_missing_keys`). Only variable names are ever reported, never values.
Used by :mod:`adk_eval_action.adk.evaluate.preflight`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

from google.adk.models import BaseLlm

API_KEY_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
"""Where google-genai finds a Gemini API key (``google.genai._api_client.get_env_api_key``)."""

CREDENTIALS_HINT = (
    "set GOOGLE_API_KEY (or GEMINI_API_KEY) for the Gemini API, or "
    "GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION and "
    "Application Default Credentials for Vertex AI"
)

def _truthy(environ: Mapping[str, str], name: str) -> bool | None:
    value = environ.get(name)
    return None if value is None else value.strip().lower() in ("true", "1")


def uses_vertex(environ: Mapping[str, str]) -> bool:
    """Whether google-genai will use Vertex AI: ``GOOGLE_GENAI_USE_ENTERPRISE`` when set,
    else ``GOOGLE_GENAI_USE_VERTEXAI`` (google.genai._api_client.BaseApiClient.__init__)."""
    enterprise = _truthy(environ, "GOOGLE_GENAI_USE_ENTERPRISE")
    return bool(
        enterprise if enterprise is not None else _truthy(environ, "GOOGLE_GENAI_USE_VERTEXAI")
    )


def application_default_credentials(environ: Mapping[str, str]) -> str | None:
    """Where Application Default Credentials would come from, or None; no network call.

    google.auth's order (google.auth._default.default): ``GOOGLE_APPLICATION_CREDENTIALS``,
    gcloud's ``application_default_credentials.json``, then a Google Cloud VM's metadata
    server (detected here from the machine's DMI product name, as google.auth does on Linux).
    """
    path = environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if path and os.path.isfile(path):
        return "GOOGLE_APPLICATION_CREDENTIALS"
    from adk_eval_action.adk.compat import gcloud_credentials_path, on_google_cloud_vm

    try:
        if os.path.isfile(gcloud_credentials_path()):
            return "gcloud application-default login"
    except Exception:  # noqa: BLE001 - no gcloud config folder at all
        pass
    return "Google Cloud metadata server" if on_google_cloud_vm() else None


def missing_google_credentials(
    environ: Mapping[str, str],
    adc: Callable[[Mapping[str, str]], str | None] = application_default_credentials,
) -> str | None:
    """What google-genai's Client would lack to authenticate, or None when it has enough.

    Rules of ``google.genai._api_client.BaseApiClient.__init__``: the Gemini API needs a key
    (:data:`API_KEY_VARIABLES`); Vertex AI needs a key, or Application Default Credentials
    (project from ``GOOGLE_CLOUD_PROJECT`` or the credentials), unless
    ``GOOGLE_VERTEX_BASE_URL`` points at a proxy.
    """
    has_key = any((environ.get(name) or "").strip() for name in API_KEY_VARIABLES)
    if not uses_vertex(environ):
        return None if has_key else "no GOOGLE_API_KEY or GEMINI_API_KEY is set"
    if has_key or environ.get("GOOGLE_VERTEX_BASE_URL") or adc(environ):
        return None
    return (
        "GOOGLE_GENAI_USE_VERTEXAI is set, but there is no API key and no Application Default "
        "Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud auth application-default login)"
    )


def litellm_missing_keys(llm: BaseLlm, environ: Mapping[str, str]) -> list[str]:
    """The API-key variables a LiteLLM model lacks, by LiteLLM's own rule
    (``litellm.validate_environment(model)["missing_keys"]``, which reads the process
    environment), less those ``environ`` sets; [] for any other model, or one given its own
    ``api_key``. Only ``*_API_KEY`` variables refuse: LiteLLM's other settings have defaults
    or other sources it does not look at (``OLLAMA_API_BASE`` defaults to localhost, AWS and
    Vertex AI credentials come from profiles, roles or Application Default Credentials).
    """
    lite_llm = sys.modules.get("google.adk.models.lite_llm")
    if lite_llm is None or not isinstance(llm, lite_llm.LiteLlm):
        return []  # ADK imports that module to build any LiteLlm
    from adk_eval_action.adk.compat import litellm_args

    given = litellm_args(llm)
    if given.get("api_key"):
        return []
    import litellm  # a LiteLlm calls it anyway; imported only when one is used

    found = litellm.validate_environment(llm.model, api_base=given.get("api_base"))
    return [
        name for name in found.get("missing_keys") or []
        if name.endswith("_API_KEY") and not (environ.get(name) or "").strip()
    ]


def openai_missing_keys(llm: BaseLlm, environ: Mapping[str, str]) -> list[str]:
    """``["OPENAI_API_KEY"]`` for google-adk's own OpenAI model class (``OpenAILlm`` in
    google.adk.integrations.openai, google-adk 2.x: what a bare ``gpt-*`` name resolves to)
    given no ``api_key`` when ``environ`` has none either: the openai client it builds reads
    that variable (or ``OPENAI_ADMIN_KEY``) and refuses to start without a key
    (``openai.AsyncOpenAI``: "Missing credentials"); [] for any other model."""
    if not any(cls.__name__ == "OpenAILlm" and cls.__module__.startswith("google.adk.")
               for cls in type(llm).__mro__):
        return []
    if getattr(llm, "api_key", None) or any(
        (environ.get(name) or "").strip() for name in ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY")
    ):
        return []
    return ["OPENAI_API_KEY"]


def provider_missing_keys(llm: BaseLlm, environ: Mapping[str, str]) -> tuple[str, list[str]]:
    """Which client's rule finds API-key variables missing for ``llm`` (``"LiteLLM"`` by
    :func:`litellm_missing_keys`, ``"OpenAI"`` by :func:`openai_missing_keys`) and the
    variables; ``("", [])`` when none does."""
    for client, rule in (("LiteLLM", litellm_missing_keys), ("OpenAI", openai_missing_keys)):
        missing = rule(llm, environ)
        if missing:
            return client, missing
    return "", []
