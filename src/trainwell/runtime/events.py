"""The event stream: what the hooks saw, delivered to the probes that asked.

A probe subscribes by defining ``on_<event>`` methods; the bus keeps one list
of callbacks per event, so an event nobody listens to costs one empty loop.

Events and their arguments:

- ``backward(tensors)`` / ``backward_done(tensors)``: around an outermost
  ``torch.autograd.backward`` (``Tensor.backward`` goes through it);
- ``zero_grad(owner, set_to_none)``: ``Optimizer.zero_grad`` or ``Module.zero_grad``;
- ``step_pre(optimizer, closure)`` / ``step_post(optimizer)``: every optimizer step;
- ``scheduler_step(scheduler)``: a user's ``scheduler.step()`` (not the one in its constructor);
- ``clip(parameters)`` / ``clip_done(parameters)``: ``clip_grad_norm_`` / ``clip_grad_value_`` before and after they run;
- ``scaler_scale(scaler, loss, scaled)``, ``scaler_unscale(scaler, optimizer)``, ``scaler_update(scaler)``;
- ``loader_init(loader, args, kwargs)``: a DataLoader was built (with the arguments the user gave);
- ``loader_iter(loader)``, ``loader_wait(loader, seconds)``: a DataLoader pass starts, a batch arrived;
- ``load(args, kwargs)`` / ``save(args, kwargs)``: ``torch.load`` / ``torch.save`` is called;
- ``train_mode(module, mode)``: a user's ``module.train(mode)`` / ``.eval()``;
- ``root_forward(module, output)``: a forward that no other module's forward encloses;
- ``host_read(tensor, method)``: ``.item()``, ``.tolist()``, ``.numpy()``, ``.cpu()`` or ``repr`` of a tensor
  (installed only when a probe asks: it is on every such call);
- ``loss_call(kind, input, target)``: ``cross_entropy`` / ``nll_loss`` / ``binary_cross_entropy_with_logits``;
- ``wrap(wrapper)``: a ``DistributedDataParallel`` was built; ``all_reduce(tensor)``: ``dist.all_reduce`` is
  called; ``group_destroy(group)``: ``dist.destroy_process_group`` is about to run (its store still reachable);
- ``failure(error)``: an exception leaves the watched block (a probe may return a replacement);
- ``finish()``: the watched block ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EVENTS = (
    "backward",
    "backward_done",
    "zero_grad",
    "step_pre",
    "step_post",
    "scheduler_step",
    "clip",
    "clip_done",
    "scaler_scale",
    "scaler_unscale",
    "scaler_update",
    "loader_init",
    "loader_iter",
    "loader_wait",
    "load",
    "save",
    "train_mode",
    "root_forward",
    "loss_call",
    "host_read",
    "wrap",
    "all_reduce",
    "group_destroy",
    "failure",
    "finish",
)


class Callbacks(list):  # type: ignore[type-arg]
    """The callbacks of one event; a callback that raises is dropped and noted in ``faults``."""

    def __init__(self, callbacks: list[Callable[..., Any]], faults: list[str]) -> None:
        super().__init__(callbacks)
        self.faults = faults

    def fault(self, callback: Callable[..., Any], error: BaseException) -> None:
        if callback in self:
            self.remove(callback)
        owner = getattr(callback, "__self__", callback)
        self.faults.append(f"{type(owner).__name__}.{getattr(callback, '__name__', '?')}: {type(error).__name__}: {error}")


def emit(callbacks: Callbacks, *args: Any) -> None:
    """Call every callback; a probe's bug must never break the user's training."""
    for callback in callbacks:
        try:
            callback(*args)
        except Exception as error:  # noqa: BLE001 - reported as an internal fault
            callbacks.fault(callback, error)


class Bus:
    """One list of callbacks per event name, filled from the probes' ``on_<event>`` methods."""

    def __init__(self, probes: list[Any]) -> None:
        self.faults: list[str] = []
        for name in EVENTS:
            callbacks = [getattr(probe, f"on_{name}") for probe in probes if hasattr(probe, f"on_{name}")]
            setattr(self, name, Callbacks(callbacks, self.faults))

    def wants(self, *names: str) -> bool:
        """Whether any probe listens to one of ``names`` (hooks nobody needs are not installed)."""
        return any(getattr(self, name) for name in names)
