"""Click flags derived from :data:`~.model.OPTIONS`: those of ``run`` and ``compare``
(typed and checked by click), and those of ``action`` (one per input, checked by
:func:`~.resolve.resolve` as ``INPUT_*`` are)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import click

from adk_eval_action.settings.run_settings import OPTIONS, Command, OptionSpec


class Amount(click.FloatRange):
    """A finite number >= 0 (and <= ``max``): a NaN or infinite gate amount would compare
    false with everything and silently change what fails."""

    name = "amount"

    def __init__(self, max: float | None = None) -> None:  # noqa: A002 - click's name
        super().__init__(min=0, max=max)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


def _click_type(spec: OptionSpec) -> Any:
    base = spec.base_type
    if spec.choices:
        return click.Choice(spec.choices)
    if base is float:
        return Amount(max=spec.le)
    if base is int:
        return click.IntRange(min=None if spec.ge is None else int(spec.ge),
                              max=None if spec.le is None else int(spec.le))
    if base is Path:
        return click.Path(path_type=Path, exists=spec.option.exists,
                          dir_okay=spec.option.dir_okay)
    return None


def _shown_default(spec: OptionSpec) -> str | bool:
    default = spec.default
    if default is None or default is False or spec.base_type is bool or spec.is_list:
        return False
    return str(default)


def _cli_param(spec: OptionSpec) -> Callable[[Any], Any]:
    if spec.option.argument:
        return click.argument(spec.name, nargs=-1, type=click.Path(path_type=Path))
    if spec.base_type is bool:
        pairs = [f"{flag}/--no-{flag[2:]}" for flag in (spec.flag, *spec.option.aliases)]
        return click.option(*pairs, spec.name, default=None, help=spec.option.help)
    return click.option(spec.flag, *spec.option.aliases, spec.name, type=_click_type(spec),
                        default=None, show_default=_shown_default(spec),
                        help=spec.option.help)


def _input_param(
    spec: OptionSpec, choices: tuple[str, ...] | None = None,
) -> Callable[[Any], Any]:
    # Values stay text here: resolve() checks them as it checks INPUT_* (same messages).
    flag = spec.input_flag
    if spec.base_type is bool:
        return click.option(f"{flag}/--no-{flag[2:]}", spec.name, default=None,
                            help=spec.option.help)
    allowed = spec.choices if choices is None else choices
    return click.option(flag, spec.name, multiple=spec.is_list,
                        type=click.Choice(allowed) if allowed else None,
                        help=f"Input `{spec.name}`: {spec.option.help}")


def input_option(
    name: str, choices: tuple[str, ...] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The ``action`` flag of input ``name`` alone, for another command that takes it (the
    fork recipe's ``comment``); ``choices`` narrows a choice option's values."""
    return _input_param(OPTIONS[name], choices)


def _params(command: Command | Literal["action"]) -> Iterator[Callable[[Any], Any]]:
    for spec in OPTIONS.values():
        if command == "action":
            if spec.option.input:
                yield _input_param(spec)
        elif command in spec.option.commands:
            yield _cli_param(spec)


def click_options(
    command: Command | Literal["action"],
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator adding the flags of ``command`` (``run``, ``compare``, or ``action``:
    one flag per input), each with default None ("not given"), to a click command."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for param in reversed(list(_params(command))):
            func = param(func)
        return func

    return decorate
