"""Text that must fit a limit or survive being written: one truncation rule for every size
limit (the PR comment, the job summary, the rendered comment) and lone surrogates made
writable.

Limits are GitHub's: 65,536 characters for a comment body (422 "Body is too long") and
1 MiB for a step summary (the runner's ``AttachmentSizeLimit``), contract §2-3.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["fit", "without_surrogates"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def _size(text: str, unit: Literal["chars", "bytes"]) -> int:
    return len(text) if unit == "chars" else len(text.encode("utf-8", "replace"))


def fit(text: str, limit: int, note: str = "", unit: Literal["chars", "bytes"] = "chars") -> str:
    """``text`` if it fits ``limit`` (characters, or UTF-8 bytes with ``unit="bytes"``);
    else its longest prefix that ends at a line boundary and leaves room for ``note``,
    followed by ``note``. The result never exceeds ``limit`` (an empty string when even
    ``note`` does not fit); a text without a newline in the kept part is cut mid-line.

    The one truncation rule of the comment (``github.sticky``), the job summary
    (``github.files``) and the rendered comment (``report.render``).
    """
    if _size(text, unit) <= limit:
        return text
    room = limit - _size(note, unit)
    if room < 0:
        return ""
    if unit == "chars":
        cut = text[:room]
    else:
        cut = text.encode("utf-8", "replace")[:room].decode("utf-8", "ignore")
    if "\n" in cut:
        cut = cut[: cut.rfind("\n") + 1]
    return cut + note


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (``"\\ud800"``, or bytes decoded with
    ``surrogateescape``) replaced by U+FFFD: valid in JSON strings and Python, but not
    encodable as UTF-8, so a file holding one could not be written."""
    return _SURROGATE.sub("\ufffd", text)
