"""Deferring the libraries google-adk's metric evaluators import but use only to score.

``google.adk.evaluation.metric_evaluator_registry`` imports every evaluator class, and with
them ROUGE (``rouge_score`` and NLTK, for ``response_match_score``) and the Vertex AI SDK
(``agentplatform``/``vertexai`` and ``google.cloud.aiplatform``, for the Vertex AI metrics):
about 8 s of a process that only needs the evaluators' classes and constructors, as
``plan`` and ``init`` do (they never score). Under :func:`deferred_scoring_imports` those
modules are created with the standard library's :class:`importlib.util.LazyLoader`: each
runs the first time one of its attributes is used, so what scores or builds a Vertex AI
evaluator gets the whole module, only later. Correctness never depends on it: a google-adk
that touches one of them at import time (1.x imports ``vertexai.preview`` submodules, which
runs ``vertexai``) just pays the import then.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType

#: Modules google-adk (2.x) imports at module level for scoring only (exact names: a
#: package's own submodules run as usual once the package runs).
SCORING_ONLY_MODULES = (
    "agentplatform",  # google.adk.dependencies._agentplatform (Vertex AI metrics)
    "vertexai",  # google.adk.dependencies.vertexai (Vertex AI metrics)
    "rouge_score.rouge_scorer",  # google.adk.dependencies.rouge_scorer (imports NLTK)
    "rouge_score.tokenizers",
)


class _LazyFinder(importlib.abc.MetaPathFinder):
    """Finds ``names`` as the finders after it would, with a lazy loader."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """The spec of the finders after this one, its loader made lazy; None for a name
        not deferred, or a module whose loader cannot be (an extension module)."""
        if fullname not in self.names:
            return None
        later = sys.meta_path[sys.meta_path.index(self) + 1:] if self in sys.meta_path else []
        for finder in later:
            find = getattr(finder, "find_spec", None)
            spec: importlib.machinery.ModuleSpec | None = (
                find(fullname, path, target) if find else None)
            if spec is None:
                continue
            if isinstance(spec.loader, importlib.abc.Loader) and hasattr(
                    spec.loader, "exec_module"):
                spec.loader = importlib.util.LazyLoader(spec.loader)
            return spec
        return None


@contextmanager
def deferred_scoring_imports(
    names: Sequence[str] = SCORING_ONLY_MODULES,
) -> Iterator[None]:
    """Within the block, the modules ``names`` (default :data:`SCORING_ONLY_MODULES`)
    are imported lazily (module docstring); those imported stay lazy after it. For the
    commands that build evaluators and never score (``plan``, ``init``): the lazy loader
    is not safe for two threads touching one module first at once before Python 3.12.3
    (CPython gh-114763), and ``run`` scores in threads.

    A module already imported is left as it is. A deferred module that is not installed
    raises at its import as usual; an error raised while one runs is raised where it is
    first used.
    """
    finder = _LazyFinder([n for n in names if n not in sys.modules])
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
