"""When the user's model fails inside `trainwell fit`: their frames and the shapes, not 20 frames.

``InputRecorder`` hooks the top-level module: before each forward it keeps a
reference to the inputs (no copy, no host sync) and notes that a forward is
running. If training raises, ``describe`` says whether the model's forward was
running, shows the user's own frames once each, the input batch's shapes and
what the model's first layer expects (a Linear's ``in_features``, a conv's
``in_channels``, ...).
"""

from __future__ import annotations

from typing import Any

from torch import nn

from trainwell.errors import describe_user_error

# The first layer that says what input it expects: (type, attribute, what it is).
_EXPECTS = (
    (nn.Linear, "in_features", "the size of the input's last dimension"),
    (nn.Bilinear, "in1_features", "the size of the first input's last dimension"),
    (nn.modules.conv._ConvNd, "in_channels", "the input's channel dimension (dim 1)"),
    (nn.Embedding, "num_embeddings", "token ids below it (integer input)"),
    (nn.RNNBase, "input_size", "the size of the input's last dimension"),
    (nn.LayerNorm, "normalized_shape", "the input's trailing dimensions"),
    (nn.MultiheadAttention, "embed_dim", "the size of the input's last dimension"),
)


class InputRecorder:
    """Remember the model's last input and whether its forward is running."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.inputs: tuple[Any, dict[str, Any]] | None = None
        self.inside = False
        self._handles = [
            model.register_forward_pre_hook(self._before, with_kwargs=True),
            model.register_forward_hook(self._after, with_kwargs=True),
        ]

    def _before(self, module: nn.Module, args: Any, kwargs: Any) -> None:
        self.inputs, self.inside = (args, kwargs), True

    def _after(self, module: nn.Module, args: Any, kwargs: Any, output: Any) -> None:
        self.inside = False

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()

    def describe(self, error: BaseException) -> str:
        """The failure in a few lines: what raised, the user's frames, the shapes."""
        what = "the model's forward" if self.inside else "training (outside the model's forward)"
        context = []
        if self.inputs is not None:
            context.append(f"the model's input: {_shapes(*self.inputs)}")
        expects = first_layer_expects(self.model)
        if expects and self.inside:
            context.append(expects)
        context.append("(--debug shows the full traceback)")
        return describe_user_error(error, what, context)


def first_layer_expects(model: nn.Module) -> str | None:
    """What the first layer that declares its input size expects, in words."""
    for name, module in model.named_modules():
        for kind, attribute, meaning in _EXPECTS:
            if isinstance(module, kind):
                value = getattr(module, attribute)
                value = tuple(value) if isinstance(value, (list, tuple)) else value
                label = f"'{name}' " if name else ""
                return (f"its first layer {label}({type(module).__name__}) expects "
                        f"{attribute}={value}: {meaning}")
    return None


def _shapes(args: Any, kwargs: dict[str, Any]) -> str:
    parts = [_shape(a) for a in args] + [f"{k}={_shape(v)}" for k, v in kwargs.items()]
    return ", ".join(parts) if parts else "no arguments"


def _shape(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return f"{tuple(value.shape)} {str(value.dtype).removeprefix('torch.')}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_shape(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_shape(v) for v in value) + "]"
    return type(value).__name__
