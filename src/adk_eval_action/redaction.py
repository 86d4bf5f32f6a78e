"""Secret values kept out of every file and log line the tool writes.

Known secrets are the action's token and the value of every environment variable whose
name looks like a key, token, secret or password (:data:`SECRET_NAME`), of at least
:data:`MIN_SECRET_CHARS` characters. Agents echo them (an agent that answers with
``os.environ``, an error message holding a key), and the results file is uploaded as an
artifact: :class:`Redactor` replaces each of them with :data:`REDACTED` in the results, the
comment, the job summary and the log (docs/action.md, "Security model").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, MutableMapping

__all__ = [
    "MIN_SECRET_CHARS", "REDACTED", "SCRUBBED_NAMES", "SCRUBBED_PREFIXES", "SECRET_NAME",
    "Redactor", "scrub_environment", "secret_values",
]

#: Names of environment variables whose values are secrets (case-insensitive search).
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE", re.IGNORECASE)
#: Shorter values are not redacted: they would match ordinary words and numbers.
MIN_SECRET_CHARS = 8
#: What a secret value is replaced with.
REDACTED = "***"


def secret_values(env: Mapping[str, str], extra: Iterable[str] = ()) -> list[str]:
    """The values to redact: ``extra`` (the token) and those of ``env`` whose names match
    :data:`SECRET_NAME`, each at least :data:`MIN_SECRET_CHARS` long, without repeats."""
    found = [v for v in extra if v]
    found += [value for name, value in env.items() if SECRET_NAME.search(name)]
    return sorted({v.strip() for v in found if len(v.strip()) >= MIN_SECRET_CHARS},
                  key=lambda v: (-len(v), v))


class Redactor:
    """Replaces known secret values in text (and their JSON-escaped forms, so a results
    file's text can be redacted as it is). ``repr`` never shows them."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        plain = sorted({v for v in values if len(v) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        forms = {form for v in plain for form in (v, json.dumps(v)[1:-1])}
        self._pattern = (
            re.compile("|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)))
            if forms else None
        )
        self.values = tuple(plain)

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __repr__(self) -> str:
        return f"Redactor({len(self.values)} secret value(s))"

    def __call__(self, text: str) -> str:
        """``text`` with every known secret value replaced by :data:`REDACTED`."""
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(REDACTED, text)

    def found_in(self, text: str) -> bool:
        """Whether ``text`` holds a known secret value."""
        return self._pattern is not None and self._pattern.search(text) is not None


#: Variables removed from the environment before the agent is imported: the action's own
#: inputs (the token among them) and the runner's tokens, which an agent never needs.
SCRUBBED_PREFIXES = ("INPUT_",)
SCRUBBED_NAMES = ("GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN")


def scrub_environment(environ: MutableMapping[str, str]) -> list[str]:
    """Remove :data:`SCRUBBED_PREFIXES`/:data:`SCRUBBED_NAMES` from ``environ`` (the
    process environment the agent is imported in); returns the names removed."""
    names = [n for n in environ if n.startswith(SCRUBBED_PREFIXES) or n in SCRUBBED_NAMES]
    for name in names:
        del environ[name]
    return names
