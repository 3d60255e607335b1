"""TW114 replicas-diverged: under data parallelism the ranks' parameters differ after an optimizer step.

The replicated parameters are those of every ``DistributedDataParallel`` model
(minus the ones it is told to ignore) and, for hand-written data parallelism,
the parameters whose gradient went through ``dist.all_reduce`` before the
step. On sampled steps each rank computes, per replicated tensor, the float64
sum and sum of absolute values (one small reduction per tensor, read one step
later on an accelerator, so no host sync is added), and posts them to the
process group's store; each rank compares the posts of every rank as soon as
they are all there (without waiting; at ``destroy_process_group`` and at the
end it waits a few seconds). Replicas that got the same all-reduced gradients
hold bit-equal values, so any difference is a divergence. Reported at the
optimizer step after which it was first seen. Sharded parameters (FSDP,
DTensor) are not replicas and are skipped; buffers are never compared; a
divergence already explained by TW113 (a forward that bypassed the wrapper)
is not reported twice.
"""

from __future__ import annotations

import weakref
from datetime import timedelta
from typing import Any

import torch

from trainwell.runtime.location import Location
from trainwell.runtime.probes import Probe
from trainwell.runtime.probes._group import default_group
from trainwell.runtime.session import sampled

_PREFIX = "trainwell/TW114"
_FINAL_WAIT_S = 5


def _replicated(tensor: torch.Tensor) -> bool:
    return type(tensor) is torch.nn.Parameter or type(tensor) is torch.Tensor  # a DTensor (FSDP2) is a shard


class ReplicasDiverged(Probe):
    codes = ("TW114",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.wrappers: list[weakref.ref[Any]] = []
        self.reduced: set[int] = set()  # id(tensor) all-reduced since the last step
        self.hand_replicas: dict[int, tuple[weakref.ref[Any], str]] = {}  # id(param) -> (param, name)
        self.computed: list[tuple[int, Location | None, list[str], torch.Tensor]] = []  # not yet posted
        self.posted: list[tuple[int, Location | None, list[str], int]] = []  # (step, where, names, world)
        self.store: Any = None
        self.done = False

    def on_wrap(self, wrapper: Any) -> None:
        if isinstance(wrapper, torch.nn.parallel.DistributedDataParallel):
            self.wrappers.append(weakref.ref(wrapper))

    def on_all_reduce(self, tensor: Any) -> None:
        if isinstance(tensor, torch.Tensor):
            self.reduced.add(id(tensor))

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        if self.done:
            return
        if self.reduced:
            for index, param in enumerate(p for group in optimizer.param_groups for p in group["params"]):
                if param.grad is not None and id(param.grad) in self.reduced:
                    self.hand_replicas.setdefault(id(param), (weakref.ref(param), f"parameter {index} of {type(optimizer).__name__}"))
            self.reduced.clear()
        self._post()
        self._compare(wait=False)
        step = self.session.step
        if not sampled(step):
            return
        named = self._replicas()
        if not named:
            return
        names = [name for name, _ in named]
        with torch.no_grad():  # on an accelerator: queued now, read at the next step
            sums = torch.stack([torch.stack((p.detach().double().sum(), p.detach().double().abs().sum())) for _, p in named])
        info = self.session.optimizers.get(id(optimizer))
        self.computed.append((step, info.step_location if info is not None else None, names, sums))
        if sums.device.type == "cpu":
            self._post()

    def _replicas(self) -> list[tuple[str, torch.Tensor]]:
        found: list[tuple[str, torch.Tensor]] = []
        seen: set[int] = set()
        for ref in self.wrappers:
            wrapper = ref()
            if wrapper is None:
                continue
            ignored = set(getattr(wrapper, "parameters_to_ignore", ()))
            for name, param in wrapper.module.named_parameters():
                if name not in ignored and param.requires_grad and _replicated(param) and id(param) not in seen:
                    seen.add(id(param))
                    found.append((name, param))
        for key, (ref, name) in self.hand_replicas.items():
            param = ref()
            if param is not None and key not in seen and _replicated(param):
                seen.add(key)
                found.append((name, param))
        return found

    def _post(self) -> None:
        if not self.computed:
            return
        store, rank, world = default_group()
        if store is None or world < 2:
            self.computed.clear()
            return
        self.store = store
        for step, where, names, sums in self.computed:
            mine = sums.cpu().numpy().tobytes()
            try:
                store.set(f"{_PREFIX}/{step}/{rank}", mine)
            except Exception:  # noqa: BLE001 - the store went away
                continue
            self.posted.append((step, where, names, world))
        self.computed.clear()

    def _compare(self, wait: bool) -> None:
        store = self.store
        for item in list(self.posted):
            if self.done:
                return
            step, where, names, world = item
            keys = [f"{_PREFIX}/{step}/{r}" for r in range(world)]
            try:
                if wait:
                    store.wait(keys, timedelta(seconds=_FINAL_WAIT_S))
                elif not store.check(keys):
                    continue
                posts = [store.get(k) for k in keys]
            except Exception:  # noqa: BLE001 - the store went away with the group
                self.posted.remove(item)
                continue
            self.posted.remove(item)
            if any(post != posts[0] for post in posts):
                self._report(step, where, names, posts, world)

    def _report(self, step: int, where: Location | None, names: list[str], posts: list[bytes], world: int) -> None:
        import numpy as np

        self.done = True  # every later step trains N different models: one finding says it
        if any(f.code == "TW113" for f in self.session.findings.values()):
            return  # the bypassed wrapper found by TW113 is the cause, already reported
        values = [np.frombuffer(post, dtype=np.float64).reshape(-1, 2) for post in posts]
        apart = [i for i in range(len(names)) if any((v[i] != values[0][i]).any() for v in values[1:])]
        first = names[apart[0]] if apart else "?"
        ranks = [r for r in range(world) if posts[r] != posts[0]]
        self.session.report(
            "TW114",
            f"after optimizer step {step} the parameters differ between the ranks: {len(apart)} of {len(names)} "
            f"replicated tensors (first: {first!r}) hold other values on rank{'s' if len(ranks) > 1 else ''} "
            f"{', '.join(map(str, ranks))} than on rank 0: from here on the ranks train {world} different models",
            where,
            hint="give every rank the same update: no rank-only change of gradients or weights after the all-reduce, "
                 "broadcast the initial weights (DDP does it) and all-reduce every gradient",
            step=step,
        )

    def on_group_destroy(self, group: Any) -> None:
        if group is None:  # the default group ends: settle while its store is there
            self._post()
            self._compare(wait=True)

    def on_finish(self) -> None:
        self._post()
        if self.store is not None:
            self._compare(wait=True)
