"""The catalog of silent training-loop bugs: one entry per stable code.

Everything in trainwell points here: the static rules, the runtime probes, the
trainer's tests and the doc pages. Codes are never renumbered or reused.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

STATIC = "static"
RUNTIME = "runtime"
# Advice, not a bug: the run is right, only slower or less reproducible than it could be. Shown as warnings.
ADVICE = frozenset({"TW404", "TW503", "TW504"})


@dataclass(frozen=True)
class BugClass:
    """One class of silent bug: its stable code, its name and who detects it."""

    code: str
    name: str
    summary: str
    detectors: frozenset[str]
    default_enabled: bool = True

    @property
    def severity(self) -> str:
        """``error`` for a bug, ``warning`` for advice (every output format and the editor say it so)."""
        return "warning" if self.code in ADVICE else "error"

    @property
    def page_name(self) -> str:
        return f"{self.code}-{self.name}.md"

    def page(self) -> str:
        """The rule's documentation page (markdown)."""
        return resources.files(__package__).joinpath("rules", self.page_name).read_text(encoding="utf-8")


def _entry(code: str, name: str, summary: str, *detectors: str, default_enabled: bool = True) -> BugClass:
    return BugClass(code, name, summary, frozenset(detectors), default_enabled)


CATALOG: dict[str, BugClass] = {
    entry.code: entry
    for entry in (
        # Optimizer and gradient lifecycle
        _entry("TW101", "zero-grad-missing", "gradients are never cleared in the training loop, so every step applies the sum of all past gradients", STATIC, RUNTIME),
        _entry("TW102", "zero-grad-wipes-gradients", "zero_grad() between backward() and step(): the step applies nothing", STATIC, RUNTIME),
        _entry("TW103", "clip-out-of-order", "gradient clipping before backward() (clips nothing) or after step() (too late)", STATIC, RUNTIME),
        _entry("TW104", "clip-scaled-gradients", "clipping with an enabled GradScaler without scaler.unscale_(optimizer) first: the threshold applies to scaled gradients", STATIC, RUNTIME),
        _entry("TW105", "scheduler-before-optimizer", "scheduler.step() before optimizer.step() in the same iteration: the first LR value is skipped", STATIC, RUNTIME),
        _entry("TW106", "epoch-scheduler-per-batch", "a per-epoch schedule stepped inside the batch loop: the LR decays len(loader) times too fast", STATIC, RUNTIME),
        _entry("TW107", "accumulation-unscaled-loss", "gradient accumulation over k micro-batches without dividing the loss by k: the effective LR is k times too large", STATIC),
        _entry("TW108", "backward-on-detached-loss", "the loss is built from .detach(), .data, .item() or a re-wrapped tensor: no gradient reaches the model", STATIC, RUNTIME),
        _entry("TW109", "optimizer-params-stale", "the optimizer holds tensors that are no longer the model's parameters, or state on another device or dtype", STATIC, RUNTIME),
        # Resume and many processes
        _entry("TW110", "sampler-epoch-not-set", "a shuffling DistributedSampler drives several epochs without set_epoch(epoch): every epoch sees the same order", STATIC, RUNTIME),
        _entry("TW111", "data-not-sharded", "a DistributedDataParallel model fed by a loader every rank reads whole: each rank trains on the same samples", STATIC, RUNTIME),
        _entry("TW112", "resume-state-incomplete", "a resumed run restores the model but not the optimizer, scheduler or scaler state that shapes the next steps", STATIC, RUNTIME),
        _entry("TW113", "ddp-wrapper-bypassed", "a training forward through ddp.module(x) or the model object DDP wrapped, with no forward through the wrapper before the step: gradients are never all-reduced and the replicas drift apart", STATIC, RUNTIME),
        _entry("TW114", "replicas-diverged", "under data parallelism the ranks' parameters differ after an optimizer step (compared by checksum): every later step trains N different models", RUNTIME),
        _entry("TW115", "accumulation-leftover", "accumulation steps when (i + 1) % k == 0 with i restarting every epoch and no step on the last batch: the epoch's leftover gradients leak into the next epoch's first step", STATIC, RUNTIME),
        # Modes and the autograd graph
        _entry("TW201", "train-mode-not-restored", "model.eval() for validation inside the epoch loop and no model.train() before training resumes", STATIC, RUNTIME),
        _entry("TW202", "eval-mode-missing", "validation or inference forward passes of a model with Dropout or BatchNorm in training mode", STATIC, RUNTIME),
        _entry("TW203", "no-grad-missing", "validation or inference forward passes with autograd on: graph memory and time wasted", STATIC, RUNTIME),
        _entry("TW204", "loss-tensor-kept", "a graph-carrying tensor is accumulated, stored or logged without .item() or .detach(): every step's graph stays alive", STATIC, RUNTIME),
        _entry("TW205", "eval-is-not-freeze", "a part of the model is 'frozen' with .eval() or no_grad while its parameters still require grad and sit in the optimizer", STATIC, RUNTIME),
        # Loss and metrics
        _entry("TW301", "double-softmax", "softmax before CrossEntropyLoss, or sigmoid before BCEWithLogitsLoss: gradients flatten", STATIC, RUNTIME),
        _entry("TW302", "mean-of-batch-means", "an epoch metric averaged over batch means while the last batch is smaller", STATIC),
        _entry("TW303", "nll-without-log-probs", "NLLLoss fed probabilities or raw logits instead of log_softmax output", STATIC, RUNTIME),
        _entry("TW304", "loss-shape-broadcast", "an element-wise loss between shapes that differ but broadcast ([N, 1] against [N]): the loss is taken over an N x N grid", STATIC, RUNTIME),
        _entry("TW305", "padding-in-loss", "targets padded with a value the loss does not ignore: padding positions are trained as real tokens", STATIC, RUNTIME),
        _entry("TW306", "eval-loader-drops-samples", "a validation or test DataLoader with drop_last=True: every evaluation skips up to batch_size - 1 samples", STATIC, RUNTIME),
        # Data
        _entry("TW401", "train-loader-not-shuffled", "the DataLoader that feeds training steps does not shuffle", STATIC, RUNTIME),
        _entry("TW402", "fit-on-all-data", "normalisation statistics or a preprocessor fitted on the full dataset before the train/validation split", STATIC),
        _entry("TW403", "device-mismatch", "a batch or its labels are not moved to the model's device", STATIC, RUNTIME),
        _entry("TW404", "input-bound", "the run waits on data for a large share of each step", RUNTIME),
        _entry("TW405", "random-augmentation-in-eval", "validation or test data goes through random augmentation: validation metrics are noisy and biased", STATIC, RUNTIME),
        _entry("TW406", "split-not-reproducible", "a random train/validation split without a fixed seed, recomputed on resume or in each process: validation leaks into training", STATIC),
        # Modules and I/O
        _entry("TW501", "missing-super-init", "an nn.Module subclass whose __init__ never calls super().__init__()", STATIC),
        _entry("TW502", "unsafe-torch-load", "torch.load that may unpickle arbitrary code (weights_only=False, or a bare call on PyTorch < 2.6)", STATIC, RUNTIME),
        _entry("TW503", "host-sync-in-loop", ".item(), .cpu(), .numpy() or print(tensor) on every iteration of a GPU training loop", STATIC, RUNTIME, default_enabled=False),
        _entry("TW504", "run-not-seeded", "a training program that draws random numbers and never seeds torch: two runs give different models and a failure cannot be replayed", STATIC, default_enabled=False),
        # Found only while running
        _entry("TW601", "non-finite", "the loss or the gradients become NaN or Inf", RUNTIME),
        _entry("TW602", "memory-growth", "allocated memory grows step after step in steady state", RUNTIME),
        _entry("TW603", "params-not-updated", "parameters with gradients missing from every optimizer, or optimizer parameters that never get a gradient (statically: every parameter an optimizer holds is frozen)", RUNTIME, STATIC),
    )
}


def lookup(code: str) -> BugClass:
    """The catalog entry for ``code`` (case-insensitive); KeyError if unknown."""
    return CATALOG[code.upper()]


def enabled_codes(select: list[str] | None = None, ignore: list[str] | None = None, detector: str | None = None) -> set[str]:
    """Resolve ``--select`` / ``--ignore`` (codes or prefixes such as ``TW1``) into a set of codes.

    With no ``select``, every default-enabled code is on; naming an opt-in
    code such as TW503 in ``select`` turns it on (a prefix does not).
    ``detector`` keeps only the codes that detector (``"static"`` or
    ``"runtime"``) reports.
    """
    universe = [c for c, e in CATALOG.items() if detector is None or detector in e.detectors]
    if select:
        chosen = {c for c in universe if any(_matches(c, p) for p in select)}
        chosen = {c for c in chosen if CATALOG[c].default_enabled or any(p.strip().upper() == c for p in select)}
    else:
        chosen = {c for c in universe if CATALOG[c].default_enabled}
    if ignore:
        chosen = {c for c in chosen if not any(_matches(c, p) for p in ignore)}
    return chosen


def _matches(code: str, pattern: str) -> bool:
    pattern = pattern.strip().upper()
    return pattern == "ALL" or (bool(pattern) and code.startswith(pattern))


def validate_patterns(patterns: list[str]) -> None:
    """Raise ValueError naming the first ``--select``/``--ignore`` entry that matches no code."""
    for pattern in patterns:
        if not any(_matches(code, pattern) for code in CATALOG):
            raise ValueError(f"unknown rule code or prefix {pattern!r}; codes are TW101..TW603 (see `trainwell rule --all`)")
