"""Every runnable case and corpus script runs: one subprocess executes them all with runpy.

A script that forks ranks runs in a fresh interpreter of its own: forked from a process whose
OpenMP team earlier scripts started, a rank can hang in a GNU OpenMP barrier (seen with the
TW114 cases, about one run in ten).
"""

from __future__ import annotations

import json
import os
import re
import signal
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


def starts_processes(path: Path) -> bool:
    return re.search(r"\b(start_processes|spawn|Process)\(", path.read_text(encoding="utf-8")) is not None


def run_scripts(files: list[str], timeout: float) -> dict:
    """The runner's report over ``files``; its whole process group is killed on timeout."""
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, json.dumps(files), "60"], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"the case scripts ran longer than {timeout}s: {files if len(files) < 4 else ''}")
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def test_every_runnable_case_and_corpus_script_runs():
    files = [p for p in FILES if runnable(p)]
    assert len(files) > 100
    forking = [str(p) for p in files if starts_processes(p)]
    assert forking, "the multi-process cases are not recognised"
    reports = [run_scripts([str(p) for p in files if str(p) not in forking], 900)]
    reports += [run_scripts([path], 120) for path in forking]
    failures = {p: tb for r in reports for p, tb in r["failures"].items()}
    assert failures == {}, "\n".join(f"{p}\n{tb}" for p, tb in failures.items())
    assert {p for r in reports for p in r["seconds"]} == {str(p) for p in files}
    written = [w for r in reports for w in r["written"]]
    assert written == [], f"case scripts wrote files: {written}"
