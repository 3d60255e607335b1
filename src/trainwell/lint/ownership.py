"""Which model's parameters each optimizer holds, and which keys name the same object.

Mixed into :class:`trainwell.lint.loops.Analysis`; the rules ask it whether a
``zero_grad`` clears what an optimizer steps on, or whether a submodule's
parameters sit in an optimizer.
"""

from __future__ import annotations

import ast
from functools import cached_property

from trainwell.lint.context import FileContext, key_of
from trainwell.lint.syntax import walk


class Ownership:
    """Optimizer -> models, models built out of other models, aliases."""

    ctx: FileContext
    _optimizer_models: dict[str | None, set[str]]

    @cached_property
    def _parts(self) -> dict[str, str]:
        """Models built out of other models: ``nn.Sequential(backbone, head)`` -> {backbone: model, head: model}."""
        parts: dict[str, str] = {}
        for key, role in self.ctx.roles.items():
            if role.kind == "model" and isinstance(role.node, ast.Call):
                for arg in role.node.args:
                    inner = key_of(arg)
                    if inner is not None and self.ctx.is_model(inner):
                        parts.setdefault(inner, key)
        return parts

    def part_of(self, key: str, models: set[str]) -> str | None:
        """The model in ``models`` that ``key`` is (or is a part of), else None."""
        for model in models:
            if self.same(key, model) or key.startswith(model + "."):
                return model
        whole = self._parts.get(key)
        return self.part_of(whole, models) if whole is not None and whole != key else None

    def optimizer_models(self, key: str | None) -> set[str]:
        """Keys of the models whose parameters were given to the optimizer ``key``."""
        if key not in self._optimizer_models:
            self._optimizer_models[key] = self._models_of(key)
        return self._optimizer_models[key]

    def _models_of(self, key: str | None) -> set[str]:
        role = self.ctx.role(key)
        if role is None or not isinstance(role.node, ast.Call):
            return set()
        models = set()
        nodes = [role.node]
        for name in {n.id for n in walk(role.node) if isinstance(n, ast.Name)}:
            nodes += [a.value for a in self.ctx.assignments_to({name})]
        for model in (m for node in nodes for m in self.ctx.parameter_owners(node)):  # `M` of each `M.parameters()`
            if model:
                models.add(model)
        return models

    def same(self, a: str | None, b: str | None) -> bool:
        """Whether two keys name the same object (equal, or aliases by assignment)."""
        if a is None or b is None:
            return False
        if a == b:
            return True
        role_a, role_b = self.ctx.roles.get(a), self.ctx.roles.get(b)
        return role_a is not None and role_a is role_b

    def zeroes(self, zero_key: str | None, optimizer: str | None) -> bool:
        """Whether ``zero_key.zero_grad()`` (None: ``p.grad = None``) clears what ``optimizer`` steps on."""
        if zero_key is None or optimizer is None or self.same(zero_key, optimizer) or zero_key.startswith(optimizer + "."):
            return True  # the stepped object itself, or the optimizer it wraps (`opt.optimizer.zero_grad()`)
        if self.ctx.is_optimizer(zero_key):
            return False
        models = self.optimizer_models(optimizer) or self.optimizer_models(self._role_key(optimizer))
        if not models:
            return True
        return any(self.same(zero_key, m) or zero_key.startswith(m + ".") or m.startswith(zero_key + ".") for m in models)

    def _role_key(self, key: str) -> str | None:
        role = self.ctx.roles.get(key)
        return next((k for k, r in self.ctx.roles.items() if r is role and k != key), None) if role else None
