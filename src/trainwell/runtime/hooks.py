"""Install and remove every hook and patch the watcher needs.

PyTorch's own extension points are used where they exist (global optimizer
step hooks); the calls without one, and ``Module.__call__`` (whose global
hooks cost too much per layer), are wrapped. Every installation returns a handle, and ``remove_all`` undoes them
in reverse order, so after a watched block PyTorch is exactly as it was.

Limit of ``watch()``: a name the user imported *before* the block
(``from torch.nn.utils import clip_grad_norm_``) still points at the original
function, so those calls are not seen. ``trainwell run`` installs before the
script runs, so there the names it imports are the wrapped ones.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable
from typing import Any, Protocol

import torch
import torch.nn.functional as F
import torch.nn.utils
import torch.nn.utils.clip_grad
import torch.optim.lr_scheduler as lr_scheduler
import torch.serialization
import torch.utils.data.dataloader as dataloader
from torch.optim import optimizer as optimizer_hooks

from trainwell.runtime.events import Bus
from trainwell.runtime.events import emit as _emit

_MISSING = object()


class Handle(Protocol):
    def remove(self) -> None: ...


class Patch:
    """``owner.name = replacement`` until ``remove()`` puts the original back."""

    def __init__(self, owner: Any, name: str, replacement: Any) -> None:
        self.owner, self.name, self.replacement = owner, name, replacement
        self.original = owner.__dict__.get(name, _MISSING)
        setattr(owner, name, replacement)

    def remove(self) -> None:
        if self.owner.__dict__.get(self.name, _MISSING) is not self.replacement:
            return  # someone patched over us; theirs stays
        if self.original is _MISSING:
            delattr(self.owner, self.name)
        else:
            setattr(self.owner, self.name, self.original)


class WarningFilter:
    """An ``ignore`` entry in ``warnings.filters`` that removes exactly itself."""

    def __init__(self, message: str) -> None:
        warnings.filterwarnings("ignore", message=message)
        self.entry = warnings.filters[0]

    def remove(self) -> None:
        if self.entry in warnings.filters:
            warnings.filters.remove(self.entry)
            warnings._filters_mutated()  # type: ignore[attr-defined]


def _wrap(original: Callable[..., Any], before: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` preceded by ``before(*args, **kwargs)``, with its name and docstring."""

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        before(*args, **kwargs)
        return original(*args, **kwargs)

    return wrapper


def _patch_backward(bus: Bus) -> Handle:
    original = torch.autograd.backward
    depth = [0]  # reentrant checkpointing calls backward inside a backward

    @functools.wraps(original)
    def backward(tensors: Any, *args: Any, **kwargs: Any) -> Any:
        if depth[0]:
            return original(tensors, *args, **kwargs)
        roots = (tensors,) if isinstance(tensors, torch.Tensor) else tuple(tensors)
        _emit(bus.backward, roots)
        depth[0] += 1
        try:
            result = original(tensors, *args, **kwargs)
        finally:
            depth[0] -= 1
        _emit(bus.backward_done, roots)
        return result

    return Patch(torch.autograd, "backward", backward)


def _patch_zero_grad(bus: Bus) -> list[Handle]:
    def before(owner: Any, set_to_none: bool = True) -> None:
        _emit(bus.zero_grad, owner, set_to_none)

    return [
        Patch(cls, "zero_grad", _wrap(cls.zero_grad, before))
        for cls in (torch.optim.Optimizer, torch.nn.Module)
    ]


def _optimizer_step_hooks(bus: Bus) -> list[Handle]:
    def pre(optimizer: torch.optim.Optimizer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        closure = args[1] if len(args) > 1 else kwargs.get("closure")  # args[0] is the optimizer
        _emit(bus.step_pre, optimizer, closure)

    def post(optimizer: torch.optim.Optimizer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        _emit(bus.step_post, optimizer)

    return [
        optimizer_hooks.register_optimizer_step_pre_hook(pre),
        optimizer_hooks.register_optimizer_step_post_hook(post),
    ]


def _patch_schedulers(bus: Bus) -> list[Handle]:
    depth = [0]  # ChainedScheduler / SequentialLR step their children

    def patched(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def step(scheduler: Any, *args: Any, **kwargs: Any) -> Any:
            if depth[0] or getattr(scheduler, "_is_initial", False):
                return original(scheduler, *args, **kwargs)
            _emit(bus.scheduler_step, scheduler)
            depth[0] += 1
            try:
                return original(scheduler, *args, **kwargs)
            finally:
                depth[0] -= 1

        return step

    classes = [lr_scheduler.LRScheduler] + [
        cls for cls in vars(lr_scheduler).values()
        if isinstance(cls, type) and issubclass(cls, lr_scheduler.LRScheduler) and "step" in cls.__dict__
        and cls is not lr_scheduler.LRScheduler
    ]
    return [Patch(cls, "step", patched(cls.__dict__["step"])) for cls in classes]


def _patch_clip(bus: Bus) -> list[Handle]:
    handles: list[Handle] = []
    for name in ("clip_grad_norm_", "clip_grad_value_"):
        original = getattr(torch.nn.utils.clip_grad, name)

        def clip(parameters: Any, *args: Any, __original: Callable[..., Any] = original, **kwargs: Any) -> Any:
            params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
            _emit(bus.clip, params)
            result = __original(params, *args, **kwargs)
            _emit(bus.clip_done, params)
            return result

        functools.update_wrapper(clip, original)
        for module in (torch.nn.utils.clip_grad, torch.nn.utils):
            if module.__dict__.get(name) is original:
                handles.append(Patch(module, name, clip))
    return handles


def _patch_grad_scaler(bus: Bus) -> list[Handle]:
    cls = torch.amp.GradScaler
    scale_original, unscale_original, update_original = cls.scale, cls.unscale_, cls.update

    @functools.wraps(scale_original)
    def scale(scaler: Any, outputs: Any) -> Any:
        scaled = scale_original(scaler, outputs)
        _emit(bus.scaler_scale, scaler, outputs, scaled)
        return scaled

    @functools.wraps(unscale_original)
    def unscale_(scaler: Any, optimizer: Any) -> Any:
        _emit(bus.scaler_unscale, scaler, optimizer)
        return unscale_original(scaler, optimizer)

    @functools.wraps(update_original)
    def update(scaler: Any, *args: Any, **kwargs: Any) -> Any:
        _emit(bus.scaler_update, scaler)
        return update_original(scaler, *args, **kwargs)

    return [Patch(cls, "scale", scale), Patch(cls, "unscale_", unscale_), Patch(cls, "update", update)]


def _patch_dataloader(bus: Bus) -> list[Handle]:
    init_original = dataloader.DataLoader.__init__
    iter_original = dataloader.DataLoader.__iter__
    next_original = dataloader._BaseDataLoaderIter.__next__
    loaders: dict[int, Any] = {}  # id(iterator) -> loader, for the iterators alive now

    @functools.wraps(iter_original)
    def __iter__(loader: Any) -> Any:
        iterator = iter_original(loader)
        if len(loaders) > 64:
            loaders.clear()  # iterators of abandoned passes
        loaders[id(iterator)] = loader
        _emit(bus.loader_iter, loader)
        return iterator

    @functools.wraps(next_original)
    def __next__(iterator: Any) -> Any:
        start = time.perf_counter()
        try:
            return next_original(iterator)
        except StopIteration:
            loaders.pop(id(iterator), None)
            raise
        finally:
            loader = loaders.get(id(iterator))
            if loader is not None:
                _emit(bus.loader_wait, loader, time.perf_counter() - start)

    @functools.wraps(init_original)
    def __init__(loader: Any, *args: Any, **kwargs: Any) -> None:
        init_original(loader, *args, **kwargs)
        _emit(bus.loader_init, loader, args, kwargs)

    handles: list[Handle] = [Patch(dataloader.DataLoader, "__iter__", __iter__)]
    if bus.wants("loader_init"):
        handles.append(Patch(dataloader.DataLoader, "__init__", __init__))
    if bus.wants("loader_wait"):
        handles.append(Patch(dataloader._BaseDataLoaderIter, "__next__", __next__))
    return handles


def _patch_load(bus: Bus) -> list[Handle]:
    original = torch.serialization.load

    def before(*args: Any, **kwargs: Any) -> None:
        _emit(bus.load, args, kwargs)

    wrapper = _wrap(original, before)
    return [Patch(module, "load", wrapper) for module in (torch, torch.serialization) if module.__dict__.get("load") is original]


def _patch_save(bus: Bus) -> list[Handle]:
    original = torch.serialization.save

    def before(*args: Any, **kwargs: Any) -> None:
        _emit(bus.save, args, kwargs)

    wrapper = _wrap(original, before)
    return [Patch(module, "save", wrapper) for module in (torch, torch.serialization) if module.__dict__.get("save") is original]


def _patch_train(bus: Bus) -> Handle:
    original = torch.nn.Module.train
    depth = [0]  # train() recurses into the children

    @functools.wraps(original)
    def train(module: Any, mode: bool = True) -> Any:
        if depth[0]:
            return original(module, mode)
        _emit(bus.train_mode, module, mode)
        depth[0] += 1
        try:
            return original(module, mode)
        finally:
            depth[0] -= 1

    return Patch(torch.nn.Module, "train", train)


def _patch_module_call(bus: Bus) -> Handle:
    """``Module.__call__`` wrapped to see forwards that no other module's forward encloses.

    Not PyTorch's global forward hooks: with any global hook registered every
    submodule call takes the slow path and runs two Python hooks, which costs
    several microseconds per layer. Here a nested call costs one check.
    """
    original = torch.nn.Module.__call__
    callbacks = bus.root_forward
    depth = [0]

    def __call__(module: Any, *args: Any, **kwargs: Any) -> Any:
        if depth[0]:
            return original(module, *args, **kwargs)
        depth[0] = 1
        try:
            output = original(module, *args, **kwargs)
        finally:
            depth[0] = 0
        if output is not None:
            for callback in callbacks:  # emit(), inlined: this runs on every forward
                try:
                    callback(module, output)
                except Exception as error:  # noqa: BLE001 - a probe's bug must never break training
                    callbacks.fault(callback, error)
        return output

    return Patch(torch.nn.Module, "__call__", __call__)


def _patch_losses(bus: Bus) -> list[Handle]:
    handles: list[Handle] = []
    for kind in ("cross_entropy", "nll_loss", "binary_cross_entropy_with_logits"):
        original = getattr(F, kind)

        def loss(input: Any, target: Any, *args: Any, __kind: str = kind, __original: Any = original, **kwargs: Any) -> Any:
            _emit(bus.loss_call, __kind, input, target)
            return __original(input, target, *args, **kwargs)

        functools.update_wrapper(loss, original)
        handles.append(Patch(F, kind, loss))
    return handles


def _patch_host_reads(bus: Bus) -> list[Handle]:
    handles: list[Handle] = []
    for method in ("item", "tolist", "numpy", "cpu", "__repr__"):
        original = getattr(torch.Tensor, method)

        def read(tensor: Any, *args: Any, __method: str = method, __original: Any = original, **kwargs: Any) -> Any:
            if tensor.is_cuda:
                _emit(bus.host_read, tensor, __method)
            return __original(tensor, *args, **kwargs)

        functools.update_wrapper(read, original)
        handles.append(Patch(torch.Tensor, method, read))
    return handles


def _patch_distributed(bus: Bus) -> list[Handle]:
    """``DistributedDataParallel.__init__`` (wrap), ``all_reduce`` and ``destroy_process_group`` (before they run)."""
    import torch.distributed as dist
    from torch.distributed import distributed_c10d
    from torch.nn.parallel import DistributedDataParallel

    handles: list[Handle] = []
    if not dist.is_available():
        return handles
    if bus.wants("wrap"):
        init_original = DistributedDataParallel.__init__

        @functools.wraps(init_original)
        def __init__(wrapper: Any, *args: Any, **kwargs: Any) -> None:
            init_original(wrapper, *args, **kwargs)
            _emit(bus.wrap, wrapper)

        handles.append(Patch(DistributedDataParallel, "__init__", __init__))
    for event, name in (("all_reduce", "all_reduce"), ("group_destroy", "destroy_process_group")):
        if not bus.wants(event):
            continue
        original = getattr(distributed_c10d, name)
        callbacks = getattr(bus, event)

        def before(*args: Any, __callbacks: Any = callbacks, **kwargs: Any) -> None:
            _emit(__callbacks, args[0] if args else kwargs.get("tensor", kwargs.get("group")))

        wrapper = _wrap(original, before)
        handles += [Patch(module, name, wrapper) for module in (dist, distributed_c10d) if module.__dict__.get(name) is original]
    return handles


# event names -> the installer that produces them
_INSTALLERS: list[tuple[tuple[str, ...], Callable[[Bus], Handle | list[Handle]]]] = [
    (("backward", "backward_done"), _patch_backward),
    (("zero_grad",), _patch_zero_grad),
    (("step_pre", "step_post"), _optimizer_step_hooks),
    (("scheduler_step",), _patch_schedulers),
    (("clip", "clip_done"), _patch_clip),
    (("scaler_scale", "scaler_unscale", "scaler_update"), _patch_grad_scaler),
    (("loader_init", "loader_iter", "loader_wait"), _patch_dataloader),
    (("load",), _patch_load),
    (("save",), _patch_save),
    (("train_mode",), _patch_train),
    (("root_forward",), _patch_module_call),
    (("loss_call",), _patch_losses),
    (("host_read",), _patch_host_reads),
    (("wrap", "all_reduce", "group_destroy"), _patch_distributed),
]


def install(bus: Bus, quiet_scheduler_warning: bool = False) -> list[Handle]:
    """Install what the bus's probes listen to; the caller owns the returned handles."""
    handles: list[Handle] = []
    try:
        for events, installer in _INSTALLERS:
            if bus.wants(*events):
                installed = installer(bus)
                handles.extend(installed if isinstance(installed, list) else [installed])
        if quiet_scheduler_warning:
            # the runtime checker reports this as TW105 with the user's line
            handles.append(WarningFilter(r"Detected call of `lr_scheduler\.step\(\)` before `optimizer\.step\(\)`"))
    except BaseException:
        remove_all(handles)
        raise
    return handles


def remove_all(handles: list[Handle]) -> None:
    """Remove every handle, newest first."""
    while handles:
        handles.pop().remove()
