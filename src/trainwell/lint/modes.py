"""The train/eval mode of each model along the walk of :class:`trainwell.lint.loops.Analysis` (mixed in).

Two states are kept side by side, key -> the set of modes the model may be in
(``"train"``, ``("eval", call)``, ``UNKNOWN``):

* ``modes``: over every path, a loop that runs zero times included;
* ``ran``: over the paths on which every loop walked so far ran at least once,
  so after a loop it is the state at the end of an iteration. Where a branch
  inside a loop decides and its test may change between iterations (``if epoch
  == last:``), the last iteration may take either branch: the models whose
  state the branches disagree on get ``UNKNOWN``. A test that keeps its value
  for the run (:func:`trainwell.lint.iteration.steady`) takes the same branch
  every time, so after ``for epoch ...: model.train(); ...; if not
  args.fast: model.eval()`` the model is in ``{train, eval}`` on the runs that
  trained, ``train`` on those with ``--fast``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from trainwell.lint.events import Frame
from trainwell.lint.iteration import steady

UNKNOWN = "unknown"
Modes = dict[str, frozenset]


def join(a: Modes, b: Modes) -> Modes:
    if a == b:  # most joins: the loop or branch changed no mode
        return dict(a)
    unknown = frozenset({UNKNOWN})
    return {k: a.get(k, unknown) | b.get(k, unknown) for k in a.keys() | b.keys()}


def merge(outcomes: list[Modes], binds: list[set[str]], before: Modes, bound: set[str]) -> Modes:
    """The modes after the branches of an ``if`` (or ``try``, ``match``) that reach its end."""
    # a name first bound in some branches only is unbound after the others: no use of it follows them (NameError)
    unbound = {k for k in set().union(*outcomes) if "." not in k and k not in before and k not in bound}
    merged = {k: v for k, v in outcomes[0].items() if k not in unbound}
    for other in outcomes[1:]:
        merged = join(merged, {k: v for k, v in other.items() if k not in unbound})
    for key in unbound:
        values = [o.get(key, frozenset({UNKNOWN})) for o, b in zip(outcomes, binds) if key in b or key in o]
        if values:
            merged[key] = frozenset().union(*values)
    return merged


class ModeState:
    """``modes`` and ``ran`` of the walk, and the switches that change them (needs ``same`` of Ownership)."""

    ctx: Any
    frame: Frame | None
    modes: Modes
    ran: Modes
    same: Callable[[str | None, str | None], bool]

    def _merge_modes(self, node: ast.AST, outcomes: list[Modes], outcomes_ran: list[Modes], binds: list[set[str]],
                     before: Modes, before_ran: Modes, bound: set[str]) -> None:
        """Both states after the branches of ``node``."""
        self.modes = merge(outcomes, binds, before, bound)
        self.ran = merge(outcomes_ran, binds, before_ran, bound)
        if self.frame is None or self.frame.kind != "loop":
            return  # a test outside any loop is evaluated once per run: either branch is a run of its own
        split = [key for key, value in self.ran.items() if any(o.get(key) != value for o in outcomes_ran)]
        if not split or (isinstance(node, ast.If) and self.ctx.home(node) is self.ctx and steady(self.ctx, node.test, self._loops())):
            return
        for key in split:
            self.ran[key] = self.ran[key] | {UNKNOWN}

    def _loops(self) -> list[ast.AST]:
        """The loops around the walk's position, innermost first."""
        frame, found = self.frame, []
        while frame is not None:
            if frame.kind == "loop":
                found.append(frame.node)
            frame = frame.parent
        return found

    def _set_mode(self, key: str | None, value: frozenset) -> None:
        """The mode belongs to the object: every key that names it (``self.model`` after ``self.model = model``) and
        its submodules switch with it."""
        if key is None:
            return
        for modes in (self.modes, self.ran):
            names = {key} | {known for known in modes if self.same(known, key)}
            for known in list(modes):
                if any(known.startswith(name + ".") for name in names):
                    modes[known] = value
            for name in names:
                modes[name] = value

    def mode_of(self, key: str | None, modes: Modes | None = None) -> frozenset:
        modes = self.modes if modes is None else modes
        while key:
            if key in modes:
                return modes[key]
            alias = next((known for known in modes if self.same(known, key)), None)
            if alias is not None:
                return modes[alias]
            key = key.rpartition(".")[0]
        return frozenset({UNKNOWN})
