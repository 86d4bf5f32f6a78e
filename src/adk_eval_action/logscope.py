"""Loggers sent elsewhere for the length of a block.

Shared by the evaluation (ADK's loggers to the failure slots and judge-log capture,
``adk.runtime.case_failures``, ``adk.evaluate.recording``) and the entry points' console log
(``github.logs.log_to``): each changes process-wide logging state only inside a ``with``
block and puts it back whatever the block raised.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["diverted"]


@contextmanager
def diverted(loggers: list[logging.Logger], handlers: list[logging.Handler],
             level: int) -> Iterator[None]:
    """Within the block, ``loggers`` emit records at ``level`` and above to ``handlers`` only
    (not to their parents' handlers); their handlers, level and propagation are restored on
    exit, whatever the block raised."""
    saved = [(logger.level, logger.propagate) for logger in loggers]
    for logger in loggers:
        for handler in handlers:
            logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False
    try:
        yield
    finally:
        for logger, (old_level, propagate) in zip(loggers, saved, strict=True):
            for handler in handlers:
                logger.removeHandler(handler)
            logger.setLevel(old_level)
            logger.propagate = propagate
