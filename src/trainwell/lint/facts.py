"""A file of the checked tree with its facts: names and roles (:class:`FileContext`) and, on first use, the loop
model (:class:`Analysis`) that every rule reads.

The facts layer imports in one direction: ``syntax`` < ``roles`` < ``context``
< ``events`` < ``dataflow`` < ``ownership`` / ``callees`` / ``iteration`` <
``loops`` < ``facts`` < ``index``; ``context`` < ``bindings`` < ``constants``
(the values a name can take). Rules ask this layer; none re-derives a fact.
"""

from __future__ import annotations

from functools import cached_property

from trainwell.lint.context import FileContext
from trainwell.lint.loops import Analysis


class CheckedFile(FileContext):
    """One parsed file and its loop model, built once and shared by the rules."""

    @cached_property
    def analysis(self) -> Analysis:
        return Analysis(self)
