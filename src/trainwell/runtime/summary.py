"""The table printed at the end of `trainwell run`: one row per finding, with its count."""

from __future__ import annotations

from trainwell.diagnostic import Finding
from trainwell.runtime.ranks import ranks_text
from trainwell.runtime.session import SAMPLED, display_path, step_label


def _steps(steps: int, hand_steps: int, complete: bool = True) -> str:
    text = ("" if complete else "at least ") + f"{steps} training step{'s' if steps != 1 else ''}"
    return text + (f" ({hand_steps} of them hand-written updates)" if hand_steps else "")


def render_table(findings: list[Finding], steps: int, hand_steps: int = 0, exit_code: int = 0,
                 ranks: list[str] | None = None, complete: bool = True) -> str:
    """A plain-text summary: code, name, where, first step, count (marked when only sampled steps count);
    with ``ranks`` (a run of several processes), who saw each finding, and ``steps`` is per rank
    (a lower bound when not ``complete``: some rank ended without closing its watch)."""
    lines = []
    if steps == 0:
        if exit_code:
            lines.append(f"trainwell: the script stopped (exit code {exit_code}) before its first training step: "
                         "only what ran until then was checked")
        else:
            lines.append("trainwell: no training step was seen (no optimizer.step() and no in-place update of "
                         "parameters): only what ran was checked")
        if not findings:
            return lines[0]
    steps_text = _steps(steps, hand_steps, complete) + (f" per rank, {ranks_text(ranks)}" if ranks else "")
    if not findings:
        return f"trainwell: no findings in {steps_text}"
    rows = [("code", "name", "location", "first step", "count", *(("ranks",) if ranks else ()))]
    for f in findings:
        count = f"{f.count}" + (" (sampled)" if f.extra.get("count_of") == SAMPLED else "")
        first = step_label(f.step).removeprefix("step ")
        seen_by = (", ".join(r.removeprefix("rank ") for r in f.extra.get("ranks", [])),) if ranks else ()
        rows.append((f.code, f.name, f"{display_path(f.path)}:{f.line}", first, count, *seen_by))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines.append(f"trainwell: {len(findings)} finding(s) in {steps_text}")
    lines += ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.append("  count: every occurrence; (sampled): only the steps that probe checks, a lower bound")
    lines.append("  see `trainwell rule CODE` for what each one means and how to fix it")
    return "\n".join(lines)
