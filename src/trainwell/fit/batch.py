"""How a batch reaches the model: one rule for training, validation, evaluate and predict.

- a tuple/list: the last item is the target, the others are the model's
  positional inputs (a 1-tuple has no target);
- a dict (Hugging Face style) or a dataclass (read as a dict of its fields):
  the target is the first of "labels", "label", "y", "target". With ``loss=``
  given the other entries are keyword inputs; without it the whole dict is
  (the model computes its own loss, ``outputs.loss`` or ``outputs["loss"]``).
  Either way only the keys the model's ``forward`` accepts are passed (its
  signature is read once; a ``**kwargs`` forward gets every key), so a
  collate function's extras (``pad_collate``'s ``lengths``) reach a model
  that asks for them and no other;
- a single tensor: the model's only input, no target.

A model's output that is a dict or an object with ``logits`` (Hugging Face
style) is read as its logits by ``loss=``, metrics and ``predict``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from trainwell.errors import TrainwellError

TARGET_KEYS = ("labels", "label", "y", "target")


def as_mapping(batch: Any) -> Mapping | None:
    """A dict batch as a mapping (a dataclass as a dict of its fields); None for other batches."""
    if dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        return {f.name: getattr(batch, f.name) for f in dataclasses.fields(batch)}
    return batch if isinstance(batch, Mapping) else None


def target_key(batch: Mapping) -> str | None:
    """The key of a dict batch's target: the first of ``TARGET_KEYS`` present."""
    return next((k for k in TARGET_KEYS if k in batch), None)


def logits_of(outputs: Any) -> Any:
    """A Hugging Face-style output's logits (``outputs["logits"]`` / ``outputs.logits``); else it."""
    if isinstance(outputs, torch.Tensor):
        return outputs
    if isinstance(outputs, Mapping):
        return outputs.get("logits", outputs)
    logits = getattr(outputs, "logits", None)
    return outputs if logits is None else logits


def loss_of_outputs(outputs: Any, batch: Any = None, target: Any = None) -> torch.Tensor:
    """The loss a model returned itself (``outputs.loss`` or ``outputs["loss"]``).

    When there is none and the batch has no target either, the missing target
    is what to fix (a Hugging Face-style model computes its loss from it).
    """
    loss = outputs.get("loss") if isinstance(outputs, Mapping) else getattr(outputs, "loss", None)
    if loss is None:
        what = f"the model returned {type(outputs).__name__} without a loss"
        if batch is not None and target is None:
            raise missing_target(batch, what)
        raise TrainwellError(f"{what}; pass loss=, e.g. loss=nn.CrossEntropyLoss(), or "
                             "step=callable(model, batch)")
    return loss


def missing_target(batch: Any, why: str) -> TrainwellError:
    """The one-line error for a batch that has no target where one is needed."""
    mapping = as_mapping(batch)
    if mapping is not None:
        seen = f"the batch's keys are {', '.join(map(str, mapping))}"
        fix = f"name the target one of {', '.join(TARGET_KEYS)}"
    elif isinstance(batch, (tuple, list)):
        seen, fix = f"the batch is a {len(batch)}-item {type(batch).__name__}", "make it (inputs, target)"
    else:
        seen, fix = f"the batch is a single {type(batch).__name__}", "make it (inputs, target)"
    return TrainwellError(f"{why}, but the batch has no target ({seen}); {fix}, or return "
                          "{'loss', 'outputs', 'target'} from step=/eval_step=")


class Route:
    """The batch rule bound to one model's ``forward`` signature (read once, here)."""

    def __init__(self, model: nn.Module, has_loss_fn: bool) -> None:
        self.has_loss_fn = has_loss_fn
        self.accepts, self.required, self.signature = _keywords(model)
        self._checked: dict[tuple, None] = {}  # key sets already checked against the signature

    def split(self, batch: Any) -> tuple[tuple, dict, Any]:
        """(positional inputs, keyword inputs, target) of ``batch``."""
        if isinstance(batch, (tuple, list)):
            if len(batch) == 1:
                return (batch[0],), {}, None
            return tuple(batch[:-1]), {}, batch[-1]
        mapping = as_mapping(batch)
        if mapping is None:
            return (batch,), {}, None
        key = target_key(mapping)
        if self.has_loss_fn and key is None:
            raise missing_target(batch, "loss= compares the model's output with a target")
        target = None if key is None else mapping[key]
        inputs = mapping if not self.has_loss_fn else {k: v for k, v in mapping.items() if k != key}
        return (), self.keywords(inputs), target

    def inputs(self, batch: Any) -> tuple[tuple, dict]:
        """The model's inputs of ``batch`` for prediction: its target left out (unless
        ``forward`` requires it), so data without targets predicts too."""
        mapping = as_mapping(batch)
        if mapping is None:
            return self.split(batch)[:2]
        key = target_key(mapping)
        if key is None or key in self.required:
            return (), self.keywords(mapping)
        return (), self.keywords({k: v for k, v in mapping.items() if k != key})

    def keywords(self, inputs: Mapping) -> dict:
        """The entries of ``inputs`` that ``forward`` accepts."""
        names = tuple(inputs)
        if names not in self._checked:
            self._check(names)
        if self.accepts is None:
            return dict(inputs)
        return {k: v for k, v in inputs.items() if k in self.accepts}

    def _check(self, names: tuple) -> None:
        missing = [n for n in self.required if n not in names]
        if missing:
            raise TrainwellError(
                f"the model's forward{self.signature} needs {', '.join(missing)}, but the batch's "
                f"keys are {', '.join(map(str, names))}; rename the key in the dataset or "
                "collate function, or pass step=callable(model, batch)")
        self._checked[names] = None


def _keywords(model: nn.Module) -> tuple[frozenset[str] | None, tuple[str, ...], str]:
    """What ``model.forward`` takes: its keyword names (None: any), the required ones, its text."""
    try:
        signature = inspect.signature(model.forward)
    except (TypeError, ValueError):  # a builtin or C forward: pass everything
        return None, (), "(...)"
    params = list(signature.parameters.values())
    if any(p.kind is p.VAR_KEYWORD for p in params):
        names = None
    else:
        names = frozenset(p.name for p in params
                          if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    required = tuple(p.name for p in params if p.default is p.empty
                     and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    return names, required, str(signature)
