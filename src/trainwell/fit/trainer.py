"""The public Trainer: plain PyTorch objects in, a correct and fast loop out."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.fit import checkpoint as ckpt
from trainwell.fit import distributed, factories, loop, preflight, rundir, saving
from trainwell.fit import several as several_optimizers
from trainwell.fit.accumulate import Windows
from trainwell.fit.batch import Route
from trainwell.fit.callbacks import Callback, CallbackList, CSVLogger, ProgressBar
from trainwell.fit.data import make_source
from trainwell.fit.evaluate import evaluate_batches, predict_batches, resolve_metrics
from trainwell.fit.precision import make_precision
from trainwell.fit.schedule import Schedule
from trainwell.fit.seeding import deterministic_mode, restore_rng, seed_everything
from trainwell.fit.state import TrainState
from trainwell.fit.step import StepRunner

NONFINITE_POLICIES = ("raise", "skip")


@dataclasses.dataclass
class FitResult:
    """What ``Trainer.fit`` returns."""

    history: list[dict[str, Any]]
    best: dict[str, Any] | None
    run_dir: Path | None
    best_checkpoint: Path | None
    last_checkpoint: Path | None
    state: TrainState
    interrupted: bool = False  # stopped by SIGINT/SIGTERM (a resumable checkpoint was written)
    signal: str | None = None  # "SIGINT" or "SIGTERM" when interrupted
    already_finished: bool = False  # resumed a run that had reached its end: nothing trained
    stopped_early: bool = False  # early stopping ended the run (the monitor stopped improving)


class FinishedRunWarning(UserWarning):
    """``fit(resume=...)`` of a run that already reached ``max_epochs``/``max_steps``."""


class Trainer:
    """Train an ``nn.Module`` with the order of operations built in.

    The model is placed on ``device`` first; an optimizer given as a factory
    is then built over the trainable parameters only. See docs/trainer.md for
    every argument.

    Example:
        >>> model = nn.Linear(4, 2)
        >>> x, y = torch.randn(32, 4), torch.randint(0, 2, (32,))
        >>> result = Trainer(model, lambda p: torch.optim.SGD(p, lr=0.1),
        ...                  loss=nn.CrossEntropyLoss(), max_epochs=2, progress=False
        ...                  ).fit((x, y), val_data=(x, y))
        >>> len(result.history)
        2
    """

    def __init__(
        self,
        model: nn.Module,
        optimizer: (torch.optim.Optimizer | Callable[[list[nn.Parameter]], torch.optim.Optimizer]
                   | Mapping[str, Any] | str),
        loss: Callable[[Any, Any], torch.Tensor] | None = None,
        step: Callable[[nn.Module, Any], Any] | None = None,
        eval_step: Callable[[nn.Module, Any], Any] | None = None,
        predict_step: Callable[[nn.Module, Any], Any] | None = None,
        scheduler: Any = None,
        scheduler_interval: str = "epoch",
        metrics: Any = None,
        max_epochs: int = 10,
        max_steps: int | None = None,
        batch_size: int = 64,
        eval_batch_size: int | None = None,
        accumulate: int = 1,
        precision: str = "32",
        clip_grad_norm: float | None = None,
        device: str | torch.device | None = None,
        seed: int = 0,
        deterministic: bool = False,
        compile: bool | dict[str, Any] = False,
        run_dir: str | Path | None = None,
        overwrite: bool = False,   # replace a run already in run_dir (its files are removed first)
        checkpoint_every: int | None = None,
        keep_last: int | None = 3,
        monitor: str = "val_loss",
        mode: str = "min",
        early_stopping_patience: int | None = None,
        nonfinite: str = "raise",
        log_every: int = 50,
        callbacks: Iterable[Callback] = (),
        progress: bool = True,
        num_workers: int | None = None,
        strategy: str = "auto",    # "auto" (DDP under torchrun with N > 1) | "ddp" | "fsdp" | "none"
        optimizer_args: dict[str, Any] | None = None,  # with optimizer="adamw": its keyword arguments
    ) -> None:
        if not isinstance(model, nn.Module):
            raise TrainwellError(f"model is a {type(model).__name__}; pass an nn.Module")
        if loss is not None and step is not None:
            raise TrainwellError("pass loss= or step=, not both: step(model, batch) computes the loss")
        for name, hook in (("step", step), ("eval_step", eval_step), ("predict_step", predict_step)):
            if hook is not None and not callable(hook):
                raise TrainwellError(f"{name}= is a {type(hook).__name__}; pass a "
                                     f"callable(model, batch), or None for the batch rule")
        _positive("max_epochs", max_epochs)
        _positive("batch_size", batch_size)
        _positive("accumulate", accumulate)
        _positive("log_every", log_every)
        for name, value in (("max_steps", max_steps), ("eval_batch_size", eval_batch_size),
                            ("checkpoint_every", checkpoint_every),
                            ("early_stopping_patience", early_stopping_patience)):
            if value is not None:
                _positive(name, value)
        if mode not in ("min", "max"):
            raise TrainwellError(f"mode={mode!r} is not known; use 'min' or 'max'")
        if nonfinite not in NONFINITE_POLICIES:
            raise TrainwellError(f"nonfinite={nonfinite!r} is not known; use 'raise' or 'skip'")
        if clip_grad_norm is not None and not clip_grad_norm > 0:
            raise TrainwellError(f"clip_grad_norm={clip_grad_norm!r} must be a positive number")

        # Under torchrun: the process group, and this rank's GPU (see distributed.py).
        self._dist, placed = distributed.setup(strategy, torch.device(device) if device else None)
        self.device = placed if placed is not None else torch.device(
            "cuda" if torch.cuda.is_available() else "cpu")
        # Place the model BEFORE any optimizer sees its parameters.
        self.model = model.to(self.device)
        self._fsdp = self._dist is not None and self._dist.kind == "fsdp"
        if self._fsdp:  # sharding replaces the parameters: the optimizer must come after
            if isinstance(optimizer, torch.optim.Optimizer):
                raise TrainwellError(
                    "strategy='fsdp' replaces the model's parameters by shards, so the optimizer "
                    "must be built after: pass a factory, e.g. lambda params: "
                    "torch.optim.AdamW(params, lr=1e-3)")
            distributed.shard_model(self.model)
        if isinstance(optimizer, str):  # by name, built as `trainwell fit` builds it (fused, else foreach)
            optimizer = factories.named_optimizer(optimizer, optimizer_args, self.model)
        elif optimizer_args is not None:
            raise TrainwellError("optimizer_args goes with an optimizer given by name, e.g. "
                                 "optimizer='adamw', optimizer_args={'lr': 1e-3}")
        several = isinstance(optimizer, Mapping)  # a GAN, actor-critic: see several.py
        if several:
            _check_several(step, accumulate, nonfinite, self._dist)
            named = several_optimizers.build(self.model, optimizer)
            self.optimizer = several_optimizers.OptimizerSet(named)
            scheduler = several_optimizers.schedulers(scheduler, named) or None
        elif isinstance(optimizer, torch.optim.Optimizer):
            self.optimizer = optimizer
        elif callable(optimizer):
            self.optimizer = optimizer([p for p in self.model.parameters() if p.requires_grad])
            if not isinstance(self.optimizer, torch.optim.Optimizer):
                raise TrainwellError(
                    f"the optimizer factory returned a {type(self.optimizer).__name__}; it must "
                    "return a torch.optim.Optimizer, e.g. lambda params: torch.optim.AdamW(params)")
        else:
            raise TrainwellError(
                f"optimizer is a {type(optimizer).__name__}; pass a torch.optim.Optimizer, a "
                "factory, e.g. lambda params: torch.optim.AdamW(params, lr=1e-3), or a dict of "
                "named ones (several optimizers)")
        if not several and scheduler is not None and not hasattr(scheduler, "step") \
                and callable(scheduler):
            scheduler = scheduler(self.optimizer)
        self.scheduler = scheduler
        self.loss_fn, self.step_fn = loss, step
        self.eval_step_fn, self.predict_step_fn = eval_step, predict_step
        self.metrics = resolve_metrics(metrics)
        self.max_epochs, self.max_steps = int(max_epochs), max_steps
        self.batch_size = int(batch_size)
        self.eval_batch_size = int(eval_batch_size or batch_size)
        self.accumulate = int(accumulate)
        self.clip_grad_norm = clip_grad_norm
        self.seed, self.deterministic, self.compile = int(seed), bool(deterministic), compile
        self.run_dir: Path | None = Path(run_dir) if run_dir is not None else None
        self.overwrite = bool(overwrite)
        self.checkpoint_every, self.keep_last = checkpoint_every, keep_last
        self.monitor, self.mode = monitor, mode
        self.early_stopping_patience = early_stopping_patience
        self.nonfinite = nonfinite
        self.log_every = int(log_every)
        self.callbacks = list(callbacks)
        self.progress = progress
        self.num_workers = num_workers
        if several:  # one precision (GradScaler) and one schedule per optimizer
            self.precision = several_optimizers.PrecisionSet(
                {name: make_precision(precision, self.device) for name in named})
            self._schedule = several_optimizers.ScheduleSet(
                {name: Schedule(s, scheduler_interval) for name, s in (scheduler or {}).items()},
                scheduler_interval)
        else:
            self.precision = make_precision(precision, self.device)
            self._schedule = Schedule(scheduler, scheduler_interval)
        self.scheduler_interval = scheduler_interval
        # compile=True: torch.compile defaults; a dict: its keyword arguments.
        options = compile if isinstance(compile, dict) else {}
        plain = torch.compile(self.model, **options) if compile else self.model
        runner_args = (loss, step, self.optimizer, self.precision, self._schedule, clip_grad_norm)
        # The batch rule reads the plain model's forward signature, once.
        phases = dict(route=Route(self.model, loss is not None), eval_fn=eval_step,
                      predict_fn=predict_step)
        # Evaluation and prediction run the plain module: DDP's forward would
        # start collectives that ranks with fewer evaluation batches never join.
        # (An FSDP module is sharded in place: it gathers in every forward.)
        self._eval_runner = StepRunner(plain, *runner_args, self.model,
                                       skip_nonfinite=nonfinite == "skip", **phases)
        if several:
            self._runner = self._eval_runner = several_optimizers.SeveralStepRunner(
                plain, *runner_args, self.model, skip_nonfinite=False, **phases)
        elif self._dist is None:
            self._runner = self._eval_runner
        elif self._fsdp:  # the sharded module itself; ranks agree on skipped batches
            self._runner = distributed.AgreedStepRunner(plain, *runner_args, self.model,
                                                        skip_nonfinite=nonfinite == "skip",
                                                        group=self._dist, **phases)
        else:
            wrapped = self._dist.wrap(self.model)
            forward = torch.compile(wrapped, **options) if compile else wrapped
            self._runner = distributed.DDPStepRunner(forward, *runner_args, wrapped,
                                                     skip_nonfinite=nonfinite == "skip",
                                                     group=self._dist, **phases)
        self.state = TrainState()
        self._stop = self._stop_requested = False
        self._interrupted: str | bool = False  # the signal's name once one arrived
        self._pending_losses: list[torch.Tensor] = []
        self._pending_sizes: list[int] = []
        self._pending_extras: list[tuple[dict[str, torch.Tensor], int]] = []
        self._callbacks = CallbackList([])
        self._folder: ckpt.CheckpointFolder | None = None
        self._last_checkpoint: Path | None = None
        self._best_checkpoint: Path | None = None
        self._windows = Windows(self.accumulate, None)
        self._monitor = monitor
        self._log_time = 0.0

    # ------------------------------------------------------------------ fit
    def fit(self, train_data: Any, val_data: Any = None,
            resume: str | Path | None = None) -> FitResult:
        """Train on ``train_data``; validate on ``val_data`` after each epoch.

        ``resume``: a checkpoint file or a run directory (its newest checkpoint).
        Inside ``run_dir`` it continues that run; with another ``run_dir`` it starts
        a new run there from that checkpoint. A ``run_dir`` that holds another run
        is refused unless ``overwrite=True`` (see docs/trainer.md).
        """
        shard = self._dist.shard if self._dist is not None else None
        train = make_source(train_data, self.batch_size, self.device, True, self.seed,
                            "train_data", self.num_workers, shard)
        val = None if val_data is None else self._eval_source(val_data, "val_data")
        if train.num_batches == 0:
            raise TrainwellError("train_data has no batches; pass at least one sample")
        self._windows = Windows(self.accumulate, train.num_batches)
        self._monitor = self._resolve_monitor(val is not None)
        steps_per_epoch = (math.ceil(train.num_batches / self.accumulate)
                           if train.num_batches is not None else None)
        planned = self._planned_steps(steps_per_epoch)
        self._preflight(train, planned)
        if val is not None:
            self._probe_validation(val)

        self.state = TrainState()
        self._stop = self._stop_requested = self._interrupted = False
        self._pending_losses.clear()
        self._pending_sizes.clear()
        self._pending_extras.clear()
        self._folder, self._saved = None, False
        self._last_checkpoint = self._best_checkpoint = None
        seed_everything(self.seed)
        self.optimizer.zero_grad(set_to_none=True)
        main = self._dist is None or self._dist.is_main  # files and progress: rank 0 only
        # Everything is checked before anything is written: the run directory
        # (rank 0 reads it, every rank gets its answer) and the checkpoint to resume.
        how = self._claim_run_dir(resume)
        rng = saving.restore(self, resume) if resume is not None else None
        if rng is not None and self._finished():
            return self._already_finished(resume)
        if rng is not None and main:
            print(f"trainwell: resumed from {self._last_checkpoint} ({self.state.where()})",
                  file=sys.stderr)
        if rng is not None and self.scheduler is not None and planned is not None:
            preflight.check_resumed_schedule(self.scheduler, self.scheduler_interval, planned)
        callbacks = list(self.callbacks)
        if self.run_dir is not None and main:
            callbacks.insert(0, CSVLogger(self.run_dir))
        if self.progress and main:
            callbacks.append(ProgressBar(planned))
        self._callbacks = CallbackList(callbacks)
        if not self.model.training:  # a model left in eval mode; submodules the user put
            self.model.train()      # in eval inside a training model stay as they are
        created: Path | None = None
        failed = True
        try:
            with deterministic_mode(self.deterministic), self._stop_on_interrupt():
                if how is not None and main:
                    created = rundir.prepare(self.run_dir, how)
                    self._folder = ckpt.CheckpointFolder(self.run_dir, self.keep_last)
                self._callbacks.fire("on_fit_start", self, self.state)
                if rng is not None:
                    restore_rng(rng)  # last, so nothing between here and the loop draws from it
                self._log_time = time.perf_counter()
                loop.run(self, self.state, train, val)
            failed = False
            if self._interrupted and main:
                self._report_interrupt()
            elif self._stopped_early() and main:
                self._report_early_stop()
        finally:
            self._runner.release()
            result = self._result()
            try:
                self._callbacks.fire("on_fit_end", self, result)
            finally:
                if failed and how in (rundir.NEW, rundir.REPLACE) and main and not self._saved:
                    rundir.discard(self.run_dir, created)  # failed before its first checkpoint
                elif failed and main and self._saved:
                    self._report_failure()
        return result

    def _probe_validation(self, val: Any) -> None:
        """One validation batch through the whole evaluation path (metrics included), before
        the first step: a batch, model or metric mismatch fails in seconds, not after an epoch.

        Runs before the seeds are set (eval mode, inference mode; no_grad under FSDP, whose
        first forward must not be an inference one): training is unchanged.
        """
        with contextlib.closing(val.epoch(0)) as batches:
            batch = next(batches, None)
        if self._fsdp and self._dist.any(batch is None):
            return  # every rank must join the same gathering forwards
        if batch is not None:
            evaluate_batches(self._eval_runner, self.model, [batch], self.metrics, self.device,
                             inference=not self._fsdp, size_of=val.size_of)

    def _report_failure(self) -> None:
        """A run that failed after writing a checkpoint keeps it: say where and how to go on."""
        print(f"trainwell: the run failed at step {self.state.step} (epoch {self.state.epoch + 1}); "
              f"{self.run_dir} keeps its checkpoints (last: {self._last_checkpoint}): fix the "
              f"error and resume with resume={str(self.run_dir)!r} "
              f"(trainwell fit --resume {self.run_dir})", file=sys.stderr)

    def _claim_run_dir(self, resume: str | Path | None) -> str | None:
        """How this run may use ``run_dir`` (see rundir.py); None without one. Reads only."""
        if self.run_dir is None:
            return None
        run_dir, overwrite = self.run_dir, self.overwrite

        def claim() -> str:
            return rundir.claim(run_dir, resume, overwrite)

        return claim() if self._dist is None else self._dist.from_rank0(claim)

    def _finished(self) -> bool:
        return self._reached_limit() or self._patience_spent()

    def _reached_limit(self) -> bool:
        state = self.state
        return state.epoch >= self.max_epochs or (
            self.max_steps is not None and state.step >= self.max_steps)

    def _patience_spent(self) -> bool:
        patience = self.early_stopping_patience
        return patience is not None and self.state.bad_epochs >= patience

    def _stopped_early(self) -> bool:
        """Early stopping ended the run before its max_epochs/max_steps."""
        return self._patience_spent() and not self._reached_limit()

    def _already_finished(self, resume: str | Path) -> FitResult:
        """A resumed run with nothing left to train: say so, write nothing."""
        state = self.state
        if self.max_steps is not None and state.step >= self.max_steps:
            reached = f"max_steps={self.max_steps}"
            extend = f"max_steps={state.step + 1} or more (or None)"
        elif state.epoch >= self.max_epochs:
            reached, extend = f"max_epochs={self.max_epochs}", f"max_epochs={state.epoch + 1} or more"
        else:
            reached = (f"stopped early: {self._monitor} did not improve for "
                       f"{_epochs(state.bad_epochs)}; "
                       f"early_stopping_patience={self.early_stopping_patience}")
            extend = f"early_stopping_patience={state.bad_epochs + 1} or more (or None)"
        if self._dist is None or self._dist.is_main:
            warnings.warn(f"resume={str(resume)!r}: the run already finished ({state.where()}; "
                          f"{reached}); nothing was trained or written; "
                          f"to train longer, pass {extend}", FinishedRunWarning, stacklevel=3)
        result = self._result()
        result.already_finished = True
        return result

    def _report_early_stop(self) -> None:
        """Early stopping ended the run: why, when, and where the best weights are."""
        state = self.state
        best = [f"best {state.best:.4g} at epoch {state.best_epoch}"] if state.best is not None else []
        if self._best_checkpoint is not None:
            best.append(f"best checkpoint {self._best_checkpoint}")
        print(f"trainwell: early stopping after epoch {state.epoch}: {self._monitor} did not "
              f"improve for {_epochs(state.bad_epochs)} (early_stopping_patience="
              f"{self.early_stopping_patience})" + (f"; {'; '.join(best)}" if best else ""),
              file=sys.stderr)

    def request_stop(self) -> None:
        """Stop at the end of the current micro-batch, saving a resumable checkpoint.

        Safe to call from a callback, a model's forward or a signal handler.
        Under DDP the ranks agree at the next log interval or epoch end, and
        stop after the same step.
        """
        if self._dist is None:
            self._stop = True
        else:
            self._stop_requested = True

    @contextlib.contextmanager
    def _stop_on_interrupt(self) -> Iterator[None]:
        """SIGINT/SIGTERM: stop after the current micro-batch and checkpoint; a second: abort.

        Installed only in the main thread (Python delivers signals there) and
        only while ``fit`` runs; the previous handlers are put back after.
        """
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        signals = [signal.SIGINT] + ([signal.SIGTERM] if hasattr(signal, "SIGTERM") else [])
        previous = {s: signal.getsignal(s) for s in signals}

        def handler(signum: int, frame: Any) -> None:
            name = signal.Signals(signum).name
            if self._interrupted:
                if signum == signal.SIGINT:
                    raise KeyboardInterrupt
                raise SystemExit(128 + signum)
            self._interrupted = name
            self.request_stop()
            if self._dist is not None and not self._dist.is_main:
                return  # rank 0 speaks for the run
            when = "this batch" if self._dist is None else "the step all ranks agree on"
            what = "saving a checkpoint" if self.run_dir is not None else "no run_dir: nothing is saved"
            print(f"trainwell: {name}: stopping after {when} and {what} "
                  f"({name} again to abort)", file=sys.stderr)

        for s in signals:
            signal.signal(s, handler)
        try:
            yield
        finally:
            for s, h in previous.items():
                signal.signal(s, h)

    def _report_interrupt(self) -> None:
        """The one message a stopped run ends with: where it stopped and how to go on."""
        where = f"at step {self.state.step} (epoch {self.state.epoch + 1}, batch {self.state.batch})"
        if self._last_checkpoint is not None and self.run_dir is not None:
            print(f"trainwell: {self._interrupted}: stopped {where}; checkpoint "
                  f"{self._last_checkpoint}; resume with resume={str(self.run_dir)!r} "
                  f"(trainwell fit --resume {self.run_dir})", file=sys.stderr)
        else:
            print(f"trainwell: {self._interrupted}: stopped {where}; no run_dir, so no "
                  "checkpoint was written", file=sys.stderr)

    # ------------------------------------------------------------ evaluate
    def evaluate(self, data: Any) -> dict[str, float]:
        """Loss and metrics over ``data``, weighted by batch size."""
        return self._evaluate_source(self._eval_source(data, "data"))

    def predict(self, data: Any) -> Any:
        """Model outputs over ``data`` under ``inference_mode``, as a CPU tensor."""
        source = make_source(data, self.eval_batch_size, self.device, False, self.seed, "data",
                             self.num_workers)  # every rank predicts all of it
        return predict_batches(self._eval_runner, self.model, source.epoch(0))

    def export_weights(self, path: str | Path) -> Path:
        """Write the model's weights only, as safetensors (under FSDP: every rank calls, rank 0
        writes)."""
        if self._fsdp:
            state = self.model_state_dict()
            return ckpt.export_state(state, path) if self._dist.is_main else Path(path)
        return ckpt.export_weights(self.model, path)

    def _eval_source(self, data: Any, what: str) -> Any:
        shard = self._dist.shard if self._dist is not None else None
        return make_source(data, self.eval_batch_size, self.device, False, self.seed, what,
                           self.num_workers, shard)

    def _evaluate_source(self, source: Any) -> dict[str, float]:
        reduce = self._dist.sum if self._dist is not None else None
        extra = 0
        if self._fsdp:  # every rank must run as many (gathering) forwards
            if source.num_batches is None:
                raise TrainwellError("strategy='fsdp' evaluates sized data only; pass val_data as "
                                     "tensors, a TensorDataset or a DataLoader with a length")
            extra = self._dist.max(source.num_batches) - source.num_batches
        return evaluate_batches(self._eval_runner, self.model, source.epoch(0), self.metrics,
                                self.device, reduce, extra, size_of=source.size_of)

    def model_state_dict(self) -> dict[str, torch.Tensor]:
        """The model's weights, whole. Under FSDP this gathers the shards: every rank must
        call it, and ranks other than 0 get an empty dict."""
        if self._fsdp:
            return distributed.full_model_state(self.model)
        return self.model.state_dict()

    def close(self) -> None:
        """Destroy the process group, when this Trainer created it (also done at exit)."""
        if self._dist is not None:
            self._dist.close()

    # ---------------------------------------------------------- checkpoint
    def _save_checkpoint(self, best: bool = False) -> None:
        saving.save(self, best)  # see saving.py

    def _payload(self) -> dict[str, Any]:
        return saving.payload(self)

    @property
    def _world(self) -> int:
        return self._dist.world_size if self._dist is not None else 1

    # ---------------------------------------------------------------- setup
    def _resolve_monitor(self, has_val: bool) -> str:
        keys = ["train_loss", "lr"]
        if has_val:
            keys += ["val_loss"] + [f"val_{m}" for m in self.metrics]
        if self.monitor in keys:
            return self.monitor
        if self.monitor == "val_loss" and not has_val:
            return "train_loss"  # the default monitor, without validation data
        raise TrainwellError(
            f"monitor={self.monitor!r} is not in the epoch records; use one of {', '.join(keys)}")

    def _planned_steps(self, steps_per_epoch: int | None) -> int | None:
        planned = steps_per_epoch * self.max_epochs if steps_per_epoch is not None else None
        if self.max_steps is not None:
            planned = self.max_steps if planned is None else min(planned, self.max_steps)
        return planned

    def _preflight(self, train: Any, planned: int | None) -> None:
        preflight.check_parameters(self.model, self.optimizer)
        if isinstance(self.optimizer, several_optimizers.OptimizerSet):
            pairs = [(s, self.optimizer.optimizers[n]) for n, s in (self.scheduler or {}).items()]
        else:
            pairs = [(self.scheduler, self.optimizer)] if self.scheduler is not None else []
        for scheduler, optimizer in pairs:
            preflight.check_scheduler_optimizer(scheduler, optimizer)
            if planned is not None:
                preflight.check_schedule(scheduler, self.scheduler_interval, planned,
                                         self.max_epochs)
        preflight.check_accumulation(self.accumulate, train.num_batches, train.drop_last)
        preflight.check_batchnorm(self.model, train.batch_size, train.last_batch_size)

    def _result(self) -> FitResult:
        history = self.state.history
        best = None
        if self.state.best_epoch is not None:
            best = next((r for r in history if r["epoch"] == self.state.best_epoch), None)
        return FitResult(history=history, best=best, run_dir=self.run_dir,
                         best_checkpoint=self._best_checkpoint,
                         last_checkpoint=self._last_checkpoint, state=self.state,
                         interrupted=bool(self._interrupted),
                         stopped_early=self._stopped_early(),
                         signal=self._interrupted or None)


def _epochs(n: int) -> str:
    return f"{n} epoch" + ("" if n == 1 else "s")


def _check_several(step: Any, accumulate: int, nonfinite: str, dist: Any) -> None:
    """What a run with several optimizers needs (see several.py)."""
    if step is None:
        raise TrainwellError("several optimizers need step=callable(model, batch, optimize) that "
                             "calls optimize(name, loss) once per optimizer (see docs/trainer.md)")
    for bad, why in ((accumulate != 1, f"accumulate={accumulate}: each optimize() call steps"),
                     (nonfinite == "skip", "nonfinite='skip': the step has already stepped"),
                     (dist is not None, "several processes (DDP/FSDP)")):
        if bad:
            raise TrainwellError(f"several optimizers do not support {why}; train them in one "
                                 "process with accumulate=1 and nonfinite='raise'")


def _positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TrainwellError(f"{name}={value!r} must be a positive integer")
