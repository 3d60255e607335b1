"""`--plot FILE.png`: learning rate, loss and gradient norm per optimizer step,
with each finding marked at the step where it first appeared.

Values are kept as device tensors and read once at the end, so recording
adds no host sync per step.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.diagnostic import Finding


class StepRecorder:
    """Subscribes to the bus; keeps one row per step of the first optimizer (or hand-written update) seen."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.optimizer_id: int | None = None
        self.last_loss: torch.Tensor | None = None
        self.scaled: tuple[Any, Any] | None = None
        self.rows: list[tuple[int, float, torch.Tensor | None, torch.Tensor | None]] = []

    def on_scaler_scale(self, scaler: Any, loss: Any, scaled: Any) -> None:
        self.scaled = (scaled, loss)

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        root = tensors[0]
        if self.scaled is not None and self.scaled[0] is root:
            root = self.scaled[1]
        if isinstance(root, torch.Tensor) and root.numel() == 1:
            self.last_loss = root.detach().reshape(())

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        if self.optimizer_id is None:
            self.optimizer_id = id(optimizer)
        if id(optimizer) != self.optimizer_id:
            return
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g.detach().float()) for g in grads])) if grads else None
        lr = optimizer.param_groups[0].get("lr")  # a hand-written update has none
        self.rows.append((self.session.step + 1, float("nan") if lr is None else float(lr), self.last_loss, norm))

    def history(self) -> dict[str, list[float | None]]:
        """The recorded rows, read from the device once."""
        def value(t: torch.Tensor | None) -> float | None:
            return None if t is None else float(t)

        return {
            "step": [float(r[0]) for r in self.rows],
            "lr": [r[1] for r in self.rows],
            "loss": [value(r[2]) for r in self.rows],
            "grad_norm": [value(r[3]) for r in self.rows],
        }


def draw(history: dict[str, list[Any]] | None, findings: list[Finding], path: str) -> None:
    """Write the three panels to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    history = history or {"step": [], "lr": [], "loss": [], "grad_norm": []}
    figure, axes = plt.subplots(3, 1, sharex=True, figsize=(8, 7))
    for axis, key, label in zip(axes, ("lr", "loss", "grad_norm"), ("learning rate", "loss", "gradient norm")):
        points = [(s, v) for s, v in zip(history["step"], history[key]) if v is not None]
        if points:
            axis.plot([p[0] for p in points], [p[1] for p in points], linewidth=1)
        axis.set_ylabel(label)
        for finding in findings:
            axis.axvline(finding.step or 0, color="tab:red", alpha=0.5, linewidth=1)
    for finding in findings:
        axes[0].annotate(finding.code, (finding.step or 0, 1), xycoords=("data", "axes fraction"), color="tab:red", fontsize=8, rotation=90, va="top")
    axes[-1].set_xlabel("optimizer step")
    figure.suptitle("trainwell run")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
