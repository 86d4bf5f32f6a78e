"""The ``baseline`` setting as a typed value: parsed once, where it enters (a flag, an
action input, a test's keyword), and carried as :class:`BaselineSpec` from there, so the
CLI's check, the baseline stage, the budget's estimate and the pipeline read one answer
(docs/baselines.md lists the modes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_serializer, model_validator

#: The keywords ``--baseline`` takes besides a results file (case-insensitive).
MODES = ("auto", "artifact", "rerun", "none")

BaselineMode = Literal["auto", "artifact", "rerun", "none", "file"]


class BaselineSpec(BaseModel):
    """What the ``baseline`` setting asks for: a keyword of :data:`MODES` (``mode``), or a
    results file (``mode == "file"``, ``path`` as given: relative to the run's working
    directory). Validates from the text a flag or input gives (None and "" are ``auto``;
    surrounding spaces ignored; keywords in any case), and serialises back to it
    (``str()``: ``"auto"``, ``"out/base.json"``)."""

    model_config = ConfigDict(frozen=True)

    mode: BaselineMode = "auto"
    path: Path | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if value is None or isinstance(value, (str, Path)):
            return cls.parse_text(value)
        return value

    @staticmethod
    def parse_text(value: str | Path | None) -> dict[str, Any]:
        """``{"mode": ..., "path": ...}`` of a ``--baseline`` value."""
        text = "" if value is None else str(value).strip()
        if text == "":
            return {"mode": "auto", "path": None}
        if text.lower() in MODES:
            return {"mode": text.lower(), "path": None}
        return {"mode": "file", "path": Path(text)}

    @model_validator(mode="after")
    def _path_only_for_files(self) -> BaselineSpec:
        if (self.mode == "file") != (self.path is not None):
            raise ValueError("a baseline file has a path, and only a file has one")
        return self

    @model_serializer
    def _as_text(self) -> str:
        return str(self)

    def __str__(self) -> str:
        return str(self.path) if self.path is not None else self.mode

    @property
    def file(self) -> Path | None:
        """The results file named (None for a keyword)."""
        return self.path if self.mode == "file" else None
