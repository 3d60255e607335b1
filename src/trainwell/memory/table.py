"""Human rendering of a MemoryReport: one table of rows, then the what-ifs, then the notes."""

from __future__ import annotations

from trainwell.memory.optimizers import OPTIMIZERS
from trainwell.memory.precision import get_precision
from trainwell.memory.report import STAGES, MemoryReport
from trainwell.memory.units import format_bytes, format_count


def _rows(report: MemoryReport) -> list[tuple[str, str, str]]:
    precision = get_precision(report.precision) if report.mode == "estimate" else None
    rows = [("weights", format_bytes(report.weights_bytes),
             f"{format_count(report.params)} params ({format_count(report.frozen_params)} frozen)")]
    if report.buffers_bytes:
        rows.append(("buffers", format_bytes(report.buffers_bytes), "BatchNorm statistics and other buffers"))
    trainable = f"{format_count(report.trainable_params)} trainable"
    rows.append(("gradients", format_bytes(report.gradients_bytes), trainable))
    known = OPTIMIZERS.get(report.optimizer)
    what = known.summary if known else report.optimizer
    rows.append(("optimizer state", format_bytes(report.optimizer_state_bytes), what))
    if report.master_weights_bytes or (precision and precision.weight_bytes < 4):
        rows.append(("fp32 master weights", format_bytes(report.master_weights_bytes),
                     "kept by the optimizer wrapper" if report.master_weights_bytes else "none kept"))
    elif precision and precision.autocast:
        rows.append(("fp32 master weights", "-", "autocast: the fp32 weights are the master copy"))
    if report.activations_bytes is None:
        rows.append(("activations", "not included", "give --batch --seq --hidden --layers"))
    else:
        rows.append(("activations", format_bytes(report.activations_bytes), "saved for backward"))
    rows.append(("total per GPU", format_bytes(report.total_bytes), ""))
    if report.gpus > 1:
        rows.append((f"total, {report.gpus} GPUs", format_bytes(report.total_all_gpus_bytes), STAGES[report.stage]))
    return rows


def render(report: MemoryReport) -> str:
    """The table people read: rows, top layers (model mode), what-ifs, notes."""
    source = "measured on one step" if report.mode == "measure" else "estimate"
    lines = [f"trainwell memory: {format_count(report.params)} parameters, {report.optimizer}, "
             f"precision {report.precision} ({source})", ""]
    rows = _rows(report)
    width = max(len(r[0]) for r in rows) + 2
    size_width = max(len(r[1]) for r in rows) + 2
    for name, size, detail in rows:
        if name == "total per GPU":
            lines.append("  " + "-" * (width + size_width))
        lines.append(f"  {name:<{width}}{size:<{size_width}}{detail}".rstrip())
    if report.top_layers:
        lines += ["", "Top layers by activation memory:"]
        for layer in report.top_layers:
            lines.append(f"  {layer.name or '(model)':<32}{layer.type:<20}{format_bytes(layer.activation_bytes)}")
    if report.what_if:
        lines += ["", "What if (total per GPU, saving):"]
        name_width = max(len(w.name) for w in report.what_if) + 2
        total_width = max(len(format_bytes(w.total_bytes)) for w in report.what_if) + 2
        changes = [f"{'saves' if w.saving_bytes >= 0 else 'adds'} {format_bytes(abs(w.saving_bytes))} "
                   f"({abs(w.saving_percent):.1f}%)" for w in report.what_if]
        change_width = max(map(len, changes)) + 2
        for w, change in zip(report.what_if, changes):
            lines.append(f"  {w.name:<{name_width}}{format_bytes(w.total_bytes):<{total_width}}"
                         f"{change:<{change_width}}{w.note}".rstrip())
    if report.notes:
        lines += [""] + [f"note: {note}" for note in report.notes]
    return "\n".join(lines)
