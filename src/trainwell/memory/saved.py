"""Count the bytes autograd saves for backward, once per storage, and who saved them.

A ``torch.autograd.graph.saved_tensors_hooks`` pack hook sees every tensor an
autograd node keeps for backward. Several saved tensors often share one
storage (a view and its base, the same input saved by two ops), so we count
each storage once, by ``(device, untyped_storage().data_ptr())``, at its full
``nbytes()``: a saved view keeps its whole storage alive. Storages of the
model's parameters and buffers are left out (already counted as weights).
Each new storage is attributed to the innermost module whose forward is
running (forward pre/post hooks keep the stack).
"""

from __future__ import annotations

from collections import defaultdict

import torch
from torch import nn


def storage_key(tensor: torch.Tensor) -> tuple[tuple[str, int], int]:
    """(identity, bytes) of the memory a tensor keeps alive."""
    try:
        storage = tensor.untyped_storage()
        return (str(tensor.device), storage.data_ptr()), storage.nbytes()
    except (RuntimeError, NotImplementedError):  # tensor subclasses without a plain storage
        return ("id", id(tensor)), tensor.numel() * tensor.element_size()


class SavedTensorCounter:
    """Context manager: while active, counts saved-for-backward bytes of ``model``'s forward."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        tensors = [*model.parameters(), *model.buffers()]
        self.excluded = {storage_key(t)[0] for t in tensors}
        self.storages: dict[tuple[str, int], int] = {}
        self.by_module: dict[str, int] = defaultdict(int)
        self.input_bytes: dict[str, int] = {}  # module name -> bytes of its first tensor input
        self.types = {name: type(module).__name__ for name, module in model.named_modules()}
        self._stack: list[str] = []
        self._handles: list = []
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, lambda tensor: tensor)

    @property
    def total_bytes(self) -> int:
        return sum(self.storages.values())

    def _pack(self, tensor: torch.Tensor) -> torch.Tensor:
        key, nbytes = storage_key(tensor)
        if key not in self.excluded and key not in self.storages:
            self.storages[key] = nbytes
            self.by_module[self._stack[-1] if self._stack else ""] += nbytes
        return tensor

    def _push(self, name: str):
        def hook(module: nn.Module, args: tuple) -> None:
            self._stack.append(name)
            first = next((a for a in args if isinstance(a, torch.Tensor)), None)
            if first is not None and name not in self.input_bytes:
                self.input_bytes[name] = storage_key(first)[1]
        return hook

    def _pop(self, module: nn.Module, args: tuple, output: object) -> None:
        if self._stack:
            self._stack.pop()

    def __enter__(self) -> "SavedTensorCounter":
        for name, module in self.model.named_modules():
            self._handles.append(module.register_forward_pre_hook(self._push(name)))
            self._handles.append(module.register_forward_hook(self._pop, always_call=True))
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hooks.__exit__(*exc)
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._stack.clear()
