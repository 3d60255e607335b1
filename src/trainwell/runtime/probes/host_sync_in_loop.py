"""TW503 host-sync-in-loop (opt-in): ``.item()``, ``.tolist()``, ``.numpy()``,
``.cpu()`` or printing a CUDA tensor on every optimizer step.

Each such call on a CUDA tensor notes its line and the current step; a line
seen in each of several consecutive steps is reported. Calls inside an
``if step % N == 0`` logging block skip steps and are not. CPU tensors cost
no device synchronisation and are ignored. The patched methods are installed
only when TW503 is selected, since they sit on every such call.
"""

from __future__ import annotations

from typing import Any

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.session import OCCURRENCES

_CONSECUTIVE = 5
_NAMES = {"item": ".item()", "tolist": ".tolist()", "numpy": ".numpy()", "cpu": ".cpu()", "__repr__": "printing a tensor"}


class HostSyncInLoop(Probe):
    codes = ("TW503",)
    counts = OCCURRENCES

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.streak: dict[Location | None, tuple[int, int, str]] = {}  # line -> (last step, run length, method)

    def on_host_read(self, tensor: Any, method: str) -> None:
        where = user_location()
        step = self.session.step + 1
        last, run, _ = self.streak.get(where, (0, 0, method))
        if last == step:
            return
        run = run + 1 if last == step - 1 else 1
        self.streak[where] = (step, run, method)
        if run == _CONSECUTIVE:
            self.session.report(
                "TW503",
                f"{_NAMES.get(method, method)} on a CUDA tensor at every optimizer step: the host waits for the device each time",
                where,
                hint="accumulate on the device and read once per epoch, or only inside an `if step % N == 0` logging block",
            )

