"""Every option of a run, once: :class:`RunSettings`, and :func:`resolve`, which builds it.

An option has one declaration here (or, for the gate rules, one field of
:class:`~adk_eval_action.project.config.GateConfig`, whose ``gate:`` section of
``adk-eval.yaml`` it also validates): its type, bounds, default and help. The CLI flags of
``run`` and ``compare`` (:func:`click_options`), the flags of ``action`` (one per input) and
the action inputs (:func:`read_inputs`) are derived from it;
``tests/unit/settings/test_settings.py`` fails when ``action.yml`` disagrees (names, defaults,
choices, descriptions).

Precedence, highest first (:data:`PRECEDENCE`): **CLI flags > action inputs (``INPUT_*``) >
adk-eval.yaml > the defaults here**. A value that is ``None``, empty or an empty list counts
as "not given" in every layer, so an empty action input never hides adk-eval.yaml.

Adding an option: add a field to :class:`~.run_settings.RunSettings`
(``settings/run_settings.py``) with an :class:`~.run_settings.Option` (or a field to
``GateConfig`` with a description), add the input to ``action.yml`` if it is one, and read it
where it is used. Nothing else declares it.

Modules: :mod:`.run_settings` (the model and :data:`OPTIONS`), :mod:`.layers` (the layers, the
inputs, :class:`RunRequest`), :mod:`.flags` (the click flags), :mod:`.baseline_spec` (the
``baseline`` setting, parsed once: :class:`BaselineSpec`).
"""

from adk_eval_action.settings.baseline_spec import MODES, BaselineSpec
from adk_eval_action.settings.flags import Amount, click_options, input_option
from adk_eval_action.settings.layers import (
    PUBLISHING_OPTIONS,
    RunRequest,
    config_layer,
    fallback_request,
    hide_secrets,
    load_request,
    publishing_settings,
    read_inputs,
    repository_root,
    resolve,
    where_settings,
)
from adk_eval_action.settings.run_settings import (
    OPTIONS,
    PRECEDENCE,
    Option,
    OptionSpec,
    RunSettings,
    Source,
)

__all__ = [
    "MODES",
    "OPTIONS",
    "PRECEDENCE",
    "PUBLISHING_OPTIONS",
    "Amount",
    "BaselineSpec",
    "Option",
    "OptionSpec",
    "RunRequest",
    "RunSettings",
    "Source",
    "click_options",
    "config_layer",
    "fallback_request",
    "hide_secrets",
    "input_option",
    "load_request",
    "publishing_settings",
    "read_inputs",
    "repository_root",
    "resolve",
    "where_settings",
]
