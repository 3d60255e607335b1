"""The table printed at the end of `trainwell run`: one row per finding, with its count."""

from __future__ import annotations

from trainwell.diagnostic import Finding
from trainwell.runtime.session import display_path


def render_table(findings: list[Finding], steps: int) -> str:
    """A plain-text summary: code, name, where, first step, count."""
    if not findings:
        return f"trainwell: no findings ({steps} optimizer steps watched)"
    rows = [("code", "name", "location", "first step", "count")]
    rows += [(f.code, f.name, f"{display_path(f.path)}:{f.line}", str(f.step), str(f.count)) for f in findings]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [f"trainwell: {len(findings)} finding(s) in {steps} optimizer steps"]
    lines += ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.append("  see `trainwell rule CODE` for what each one means and how to fix it")
    return "\n".join(lines)
