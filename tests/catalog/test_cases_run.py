"""Every runnable case and corpus script runs: one subprocess executes them all with runpy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FILES = sorted((REPO / "tests" / "cases").glob("TW*/*.py")) + sorted((REPO / "tests" / "corpus" / "correct").glob("*.py"))

# Runs each file as __main__ in a scratch working directory, with stdout swallowed, a per-file alarm,
# and reports failures, timings and anything the scripts wrote to the working directory.
RUNNER = r"""
import contextlib, io, json, os, runpy, signal, sys, tempfile, time, traceback, warnings
import torch  # imported once, so per-file timings measure the scripts themselves
files, per_file = json.loads(sys.argv[1]), float(sys.argv[2])
def alarm(*_):
    raise TimeoutError(f"ran longer than {per_file}s")
signal.signal(signal.SIGALRM, alarm)
report = {"failures": {}, "seconds": {}, "written": []}
scratch = tempfile.mkdtemp()
os.chdir(scratch)
for path in files:
    sys.argv = [path]
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, per_file)
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runpy.run_path(path, run_name="__main__")
    except BaseException:
        report["failures"][path] = traceback.format_exc(limit=3)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    report["seconds"][path] = round(time.perf_counter() - start, 3)
report["written"] = sorted(os.listdir(scratch))
print(json.dumps(report))
"""


def runnable(path: Path) -> bool:
    return not path.read_text(encoding="utf-8").startswith("# case: static-only")


def test_every_runnable_case_and_corpus_script_runs():
    files = [str(p) for p in FILES if runnable(p)]
    assert len(files) > 100
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(files), "60"],
        capture_output=True, text=True, timeout=900, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["failures"] == {}, "\n".join(f"{p}\n{tb}" for p, tb in report["failures"].items())
    assert set(report["seconds"]) == set(files)
    assert report["written"] == [], f"case scripts wrote files: {report['written']}"
