"""TW204 loss-tensor-kept and TW602 memory-growth: graphs of past steps that stay alive.

On sampled steps a tiny marker object is stored in the metadata of the
backpropagated tensor's graph node (and its direct inputs) and of each
model output's node; it dies with the graph. Two optimizer steps later the
graph should be gone: a live marker means something still holds that step's
graph. No tensor value is read. A model output counts only if a backward
went through it (a validation output kept in a variable is TW203's business).

Once, the holder is looked up among the user's variables and the line that
writes it is found by tracing one iteration (see ``_holders``). A loss total
or a list of losses/outputs is TW204; a persistent non-scalar tensor (a
running statistic, a memory bank) that chains every step's graph is TW602,
the graph-retention form of memory growth. Without a holder or a line, the
backward() of the kept graph is named. On CUDA, TW602 also watches allocated
memory (allocator statistics, no sync) growing at every check.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.probes._holders import Holder, LineFinder, find_holder
from trainwell.runtime.probes._modules import first_tensor

_AGE = 2  # optimizer steps after which a step's graph must be gone
_GROWTH_CHECKS = 4  # consecutive growing CUDA memory samples before TW602


class _Marker:
    """Lives in a graph node's metadata, so it dies with the graph; ``used`` once backpropagated."""

    __slots__ = ("used", "__weakref__")

    def __init__(self, used: bool) -> None:
        self.used = used

    def mark_used(self, grad_outputs: Any) -> None:
        self.used = True


class GraphKeptAlive(Probe):
    codes = ("TW204", "TW602")

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.markers: list[tuple[int, weakref.ref[_Marker]]] = []  # (step, marker)
        self.where: dict[int, Location | None] = {}  # step -> its first backward
        self.growth: list[float] = []
        self.cuda = torch.cuda.is_available()
        self.kept_step: int | None = None  # the first step whose graph was found kept (reported once)
        self.finder: LineFinder | None = None
        self.checking = True  # whether the step in progress is a checked one

    def _active(self) -> bool:
        return self.session.checks(self.session.step + 1)

    def _mark(self, node: Any, used: bool = True) -> None:
        if node is None or type(node).__name__ == "AccumulateGrad":
            return
        marker = _Marker(used)
        node.metadata["trainwell"] = marker
        if not used:  # a model output: only a graph that training backpropagated counts
            node.register_prehook(marker.mark_used)
        self.markers.append((self.session.step + 1, weakref.ref(marker)))

    def on_train_mode(self, module: torch.nn.Module, mode: bool) -> None:
        self.checking = self._active()

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        if self.checking:  # kept up to date by the step and mode events: this runs on every forward
            tensor = first_tensor(output)  # a model that returns (logits, loss) too
            if tensor is not None and tensor.grad_fn is not None:
                self._mark(tensor.grad_fn, used=False)

    def on_scaler_scale(self, scaler: Any, loss: Any, scaled: Any) -> None:
        if isinstance(loss, torch.Tensor) and self._active():
            self._mark(loss.grad_fn)

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        if not self._active():
            return
        step = self.session.step + 1
        if step not in self.where:
            self.where[step] = user_location()
        for tensor in tensors:
            node = getattr(tensor, "grad_fn", None)
            if node is not None:
                self._mark(node)
                for child, _ in node.next_functions:
                    self._mark(child)

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        self._settle()
        step = self.session.step + 1
        if not self.markers or self.markers[0][0] > step - _AGE:
            return
        old = [(s, ref) for s, ref in self.markers if s <= step - _AGE]
        self.markers = [(s, ref) for s, ref in self.markers if s > step - _AGE]
        kept = {id(marker): s for s, ref in old if (marker := ref()) is not None and marker.used}
        if kept and self.kept_step is None:
            self.kept_step = min(kept.values())
            holder = find_holder(lambda node: id(node.metadata.get("trainwell")) in kept)
            if holder is not None:
                self.finder = LineFinder(holder)
                if not self.finder.start():
                    self._report(holder, None)
            else:
                self._report(None, None)
        self._memory_sample(optimizer)

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        self.checking = self._active()
        if self.finder is not None and self.finder.found is not None:
            self._settle()

    def on_finish(self) -> None:
        self._settle()

    def _settle(self) -> None:
        """Stop the line finder (if any) and report what it found."""
        finder, self.finder = self.finder, None
        if finder is not None:
            finder.stop()
            self._report(finder.holder, finder.found)

    def _report(self, holder: Holder | None, line: Location | None) -> None:
        kept_step = self.kept_step or 0
        where = line or self.where.get(kept_step)
        name = f"`{holder.name}`" if holder is not None else "a tensor"
        if holder is not None and holder.is_state_tensor():
            self.session.report(
                "TW602",
                f"{name} is a persistent tensor written with graph-carrying values: it chains every step's graph "
                f"(kept since step {kept_step}), so memory grows step after step",
                where,
                hint="write .detach()ed values into running statistics and memory banks (or update them under torch.no_grad())",
                step=kept_step,
            )
        else:
            self.session.report(
                "TW204",
                f"{name} keeps the graph of every step alive (kept since step {kept_step}): the loss or the model's "
                "output is accumulated or stored without .item()/.detach()",
                where,
                hint="accumulate loss.item() (or loss.detach()) and store outputs with .detach()",
                step=kept_step,
            )

    def _memory_sample(self, optimizer: torch.optim.Optimizer) -> None:
        """CUDA only: allocated memory (allocator statistics, no sync) growing at every check."""
        if not (self.cuda and torch.cuda.is_initialized()):
            return
        self.growth.append(float(torch.cuda.memory_allocated()))
        recent = self.growth[-(_GROWTH_CHECKS + 1):]
        explained = any(code in ("TW204", "TW602") for code, _, _ in self.session.findings)
        if len(recent) > _GROWTH_CHECKS and all(b > a for a, b in zip(recent, recent[1:])) and not explained:
            self.session.report(
                "TW602",
                f"allocated CUDA memory grew at each of the last {_GROWTH_CHECKS} sampled steps: something keeps tensors of every step",
                self.session.info(optimizer).step_location or user_location(),
                hint="look for tensors stored each step without .detach()/.item() (lists, running totals, caches)",
            )
