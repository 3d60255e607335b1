"""`trainwell run` follows every rank: torch.multiprocessing spawn, multiprocessing.Process (fork), torchrun.

Each script in ``ranks/`` marks the lines the merged report must name (``# runtime: TWxxx``); every
finding must be seen on both ranks, the report printed once, the echo of each bug printed once.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
from pathlib import Path

import pytest

from trainwell.diagnostic import Finding
from trainwell.runtime.children import followed
from trainwell.runtime.ranks import RankLog, merge, ranks_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fit"))
import procs  # noqa: E402  (runs a subprocess tree, kills all of it on timeout)

RANKS = Path(__file__).with_name("ranks")
MARKER = re.compile(r"#\s*runtime:\s*(TW\d{3})")


def _port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def _markers(script: Path) -> set[tuple[str, int]]:
    return {(code, number) for number, text in enumerate(script.read_text().splitlines(), 1) for code in MARKER.findall(text)}


def _run(tmp_path: Path, *argv: str) -> tuple[dict, str]:
    report = tmp_path / "report.json"
    done = procs.run([sys.executable, "-m", "trainwell", "run", "--report", str(report), *argv], timeout=240,
                     env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(report.read_text()), done.stderr


@pytest.mark.parametrize("argv", [
    ("ranks/spawn_gloo.py", "{port}", "spawn"),       # torch.multiprocessing.start_processes, spawn
    ("ranks/process_ranks.py", "{port}", "fork"),      # multiprocessing.Process, fork: the parent's hooks inherited
    ("--nproc", "2", "ranks/torchrun_ranks.py"),       # torchrun, started by trainwell run
], ids=["mp-spawn", "process-fork", "nproc-torchrun"])
def test_every_rank_is_watched_and_reported_once_at_the_users_line(tmp_path, argv):
    port = _port()
    argv = tuple(str(Path(__file__).parent / a) if a.startswith("ranks/") else a.format(port=port) for a in argv)
    script = Path(next(a for a in argv if a.endswith(".py")))
    report, err = _run(tmp_path, *argv)
    found = {(f["code"], f["line"]) for f in report["findings"]}
    assert found == _markers(script), err[-3000:]
    assert all(f["path"] == str(script) and f["ranks"] == ["rank 0", "rank 1"] for f in report["findings"]), report
    assert report["ranks"] == ["rank 0", "rank 1"] and report["steps"] >= 4
    assert err.count("finding(s) in") == 1 and "no training step was seen" not in err
    for code, line in found:  # echoed when first seen, by one rank only
        assert len(re.findall(rf"trainwell: rank [01]: \S+:{line}: {code} ", err)) == 1, err


def test_plain_torchrun_prints_one_report_from_local_rank_0(tmp_path):
    script = RANKS / "torchrun_ranks.py"
    done = procs.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
                      "-m", "trainwell", "run", str(script)], timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("1 finding(s) in 4 training steps per rank, on ranks 0 and 1") == 1, done.stderr


def _finding(code: str, line: int, step: int) -> Finding:
    finding = Finding(code, "m", "/x/train.py", line, step=step)
    finding.extra["count_of"] = "occurrences"
    return finding


def test_a_killed_rank_keeps_what_it_wrote_as_found_and_ranks_merge_per_bug(tmp_path, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    ended = RankLog(str(tmp_path), None, index=0)
    killed = RankLog(str(tmp_path), None, index=1)
    first = _finding("TW101", 7, 3)
    ended.found(first)
    killed.found(_finding("TW101", 7, 2))
    killed.found(_finding("TW102", 9, 5))
    killed.progress(6, 0)
    with open(killed.path, "a") as handle:
        handle.write('{"kind": "end", "rank": 1, "ste')  # the kill cut this line short
    first.count = 4
    ended.close([first], 10, 0, [])
    run = merge(str(tmp_path))
    assert [(f.code, f.line, f.step, f.count, f.extra["ranks"]) for f in run.findings] == [
        ("TW101", 7, 2, 5, ["rank 0", "rank 1"]), ("TW102", 9, 5, 1, ["rank 1"])]
    assert (run.steps, run.complete, run.ranks) == (10, False, ["rank 0", "rank 1"])


def test_the_first_rank_to_see_a_bug_echoes_it_the_others_do_not(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    logs = [RankLog(str(tmp_path), sys.stderr, index=i) for i in (0, 1)]
    for log in logs:
        log.found(_finding("TW101", 7, 1))
    logs[1].found(_finding("TW102", 9, 1))
    err = capsys.readouterr().err
    assert err.count("TW101") == 1 and "rank 0: " in err and "rank 1: " in err.split("TW101")[1]


def test_only_the_users_targets_are_followed_not_loader_or_pool_workers():
    import functools
    import multiprocessing.pool

    from torch.multiprocessing.spawn import _wrap
    from torch.utils.data._utils.worker import _worker_loop

    def rank_function(rank):
        return rank

    assert followed(rank_function) and followed(functools.partial(rank_function, 1)) and followed(_wrap)
    assert not followed(_worker_loop) and not followed(multiprocessing.pool.worker) and not followed(None)


def test_ranks_read_as_a_sentence():
    assert ranks_text(["rank 0", "rank 1"]) == "on ranks 0 and 1"
    assert ranks_text(["rank 3"]) == "on rank 3"
    assert ranks_text(["main", "process 2"]) == "in main and process 2"


def test_following_is_removed_with_the_watch():
    import multiprocessing.process

    from trainwell.runtime.watcher import watch

    original = multiprocessing.process.BaseProcess.start
    with watch(follow=True):
        assert multiprocessing.process.BaseProcess.start is not original
    assert multiprocessing.process.BaseProcess.start is original
    with watch():
        assert multiprocessing.process.BaseProcess.start is original
