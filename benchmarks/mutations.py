"""Recall of `trainwell check` on bugs injected one at a time into public training scripts, fetched at run time.

    python benchmarks/mutations.py --cache ~/.cache/tw-mutations                 # git clone from GitHub
    python benchmarks/mutations.py --cache /tmp/tw-mut --mirror /work/.mirror      # offline: local git mirrors
    python benchmarks/mutations.py ... --repo karpathy/nanoGPT --tsv out.tsv --misses misses.md
    python benchmarks/mutations.py ... --operator freeze-whole-model              # one operator's mutants only

Each repository below is checked out at its pinned commit (only its Python
sources and the files that declare its PyTorch) into --cache, from a bare
clone, or from --mirror (a folder of ``owner+name/`` git directories).
Its training scripts (files that call ``backward()`` or ``zero_grad()``) go
through every operator of ``mutation_loop_ops`` and ``mutation_data_ops``; each mutant is checked as
`trainwell check` checks the file inside its project, in-process. A mutant is
*found* when its code is reported more often than in the clean file; one whose
code was already reported on the mutated line of the clean file is dropped.
Prints recall per code, the misses (file:line, operator) and the clean
files' own findings (for triage). No code of these repositories is committed.
"""

from __future__ import annotations

import argparse
import ast
import csv
import difflib
import functools
import subprocess
import sys
import time
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import mutation_data_ops
import mutation_loop_ops
from mutation_script import Mutant, Script
from trainwell.catalog import CATALOG
from trainwell.diagnostic import Finding
from trainwell.lint import config as config_mod
from trainwell.lint import runner
from trainwell.lint.dependencies import Dependencies
from trainwell.lint.index import ProjectIndex

REPOS = [  # (owner/name, commit): the corpus; the snapshots benchmarks/realworld-triage.tsv was triaged on
    ("pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8"),
    ("karpathy/nanoGPT", "3adf61e154c3fe3fca428ad6bc3818b27a3b8291"),
    ("karpathy/makemore", "988aa59e4d8fefa526d06f3b453ad116258398d4"),
    ("kuangliu/pytorch-cifar", "49b7aa97b0c12fe0d4054e670403a16b6b834ddd"),
    ("yunjey/pytorch-tutorial", "0500d3df5a2a8080ccfccbc00aca0eacc21818db"),
    ("L1aoXingyu/pytorch-beginner", "a57dd7ea35c9965a41f4963dee62d38884f92a65"),
    ("MorvanZhou/PyTorch-Tutorial", "dbe154a9e56635e51c6b0c2ccea8ae36cfb585a7"),
    ("hunkim/PyTorchZeroToAll", "e5a260fac0b4ff1e2ec434fc6f0d962ac97fc289"),
    ("weiaicunzai/pytorch-cifar100", "11d8418f415b261e4ae3cb1ffe20d06ec95b98e4"),
    ("meliketoy/wide-resnet.pytorch", "292b3ede0651e349dd566f9c23408aa572f1bd92"),
    ("bamos/densenet.pytorch", "d1cd5e1957975628286e516512c6d1c14430f810"),
    ("milesial/Pytorch-UNet", "21d7850f2af30a9695bbeea75f3136aa538cfc4a"),
    ("tkipf/pygcn", "1600b5b748b3976413d1e307540ccc62605b4d6d"),
    ("graykode/nlp-tutorial", "d05e31ec81d56d70c1db89b99ab07e948f7ebc11"),
    ("spro/practical-pytorch", "c520c52e68e945d88fff563dba1c028b6ec0197b"),
    ("eriklindernoren/PyTorch-GAN", "36d3c77e5ff20ebe0aeefd322326a134a279b93e"),
    ("jadore801120/attention-is-all-you-need-pytorch", "132907dd272e2cc92e3c10e6c4e783a87ff8893d"),
    ("sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning", "cc9c7e2f4017938d414178d3781fed8dbe442852"),
    ("layumi/Person_reID_baseline_pytorch", "82ff40fb11b7353400dc8670dcec620d97285096"),
    ("kenshohara/3D-ResNets-PyTorch", "540a0ea1abaee379fa3651d4d5afbd2d667a1f49"),
    ("sthalles/PyTorch-BYOL", "f007ed6b3619a3ae00eb9c95cde342eac5b98923"),
    ("chenyuntc/pytorch-book", "688951721d11cd3f92440801e1b68b65ae2e439f"),
    ("facebookresearch/simsiam", "a7bc1772896d0dad0806c51f0bb6f3b16d290468"),
    ("facebookresearch/barlowtwins", "8e8d284ca0bc02f88b92328e53f9b901e86b4a3c"),
    ("facebookresearch/deit", "7e160fe43f0252d17191b71cbb5826254114ea5b"),
    ("yunjey/stargan", "94dd002e93a2863d9b987a937b85925b80f7a19f"),
    ("amdegroot/ssd.pytorch", "5b0b77faa955c1917b0c710d770739ba8fbff9b7"),
    ("clovaai/deep-text-recognition-benchmark", "e2117f2fb882b3c6085030500a260c113be27a63"),
    ("timesler/facenet-pytorch", "787da06156087cd6b616fe6608213722bddc30cd"),
    ("yhenon/pytorch-retinanet", "0348a9d57b279e3b5b235461b472d37da5feec3d"),
    ("microsoft/Swin-Transformer", "f82860bfb5225915aca09c3227159ee9e1df874d"),  # AMP: GradScaler, unscale_, clip
    ("facebookresearch/dino", "7c446df5b9f45747937fb0d72314eb9f7b66930a"),
]
OPERATORS = {**mutation_loop_ops.OPERATORS, **mutation_data_ops.OPERATORS}  # name -> (code, operator)
KEPT_FILES = (".py",)
DECLARING = ("pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment.yaml")
TEST_DIRS = {"test", "tests", "testing", "docs"}


@dataclass
class Result:
    repo: str
    path: str
    mutant: Mutant
    outcome: str  # found | missed | dropped | no-rule (the installed trainwell has no static rule for the code yet)
    diff: str = ""


def mutants(script: Script, per_operator: int = 3, only: set[str] | None = None) -> Iterator[Mutant]:
    """Every operator's mutants of ``script`` (at most ``per_operator`` each); ``only``: these operators' alone."""
    for name, (_, make) in OPERATORS.items():
        if only and name not in only:
            continue
        made = 0
        for mutant in make(script):
            if mutant is not None and made < per_operator:
                made += 1
                yield mutant


def git_dir(repo: str, commit: str, cache: Path, mirror: Path | None) -> Path:
    """A git directory that has ``commit``: the mirror's, else a bare clone kept in the cache."""
    name = repo.replace("/", "+")
    if mirror is not None:
        for candidate in (mirror / name / "repo" / ".git", mirror / name / "repo", mirror / name):
            if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
                return candidate
        raise SystemExit(f"{repo}: no git directory under {mirror / name}; fetch it there or drop --mirror to clone from GitHub")
    bare = cache / ".git" / f"{name}.git"
    if not bare.is_dir():
        subprocess.run(["git", "clone", "--quiet", "--bare", f"https://github.com/{repo}.git", str(bare)], check=True)
    if subprocess.run(["git", "--git-dir", str(bare), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True).returncode:
        subprocess.run(["git", "--git-dir", str(bare), "fetch", "--quiet", "origin", commit], check=True)
    return bare


def checkout(repo: str, commit: str, cache: Path, mirror: Path | None) -> Path:
    """The repository's Python sources (and the files that declare its torch) at ``commit``, extracted once into the cache."""
    dest = cache / repo.replace("/", "+")
    marker = dest / ".trainwell-commit"
    if marker.is_file() and marker.read_text().strip() == commit:
        return dest
    git = git_dir(repo, commit, cache, mirror)
    listing = subprocess.run(["git", "--git-dir", str(git), "ls-tree", "-r", "-z", "--long", commit], capture_output=True, check=True).stdout
    wanted = []
    for entry in listing.decode(errors="replace").split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        _, kind, sha, size = meta.split()
        name = path.rsplit("/", 1)[-1]
        if kind == "blob" and size.isdigit() and int(size) < 2_000_000 and (name.endswith(KEPT_FILES) or name in DECLARING
                                                                          or name.startswith("requirements") and name.endswith(".txt")):
            wanted.append((sha, path))
    present = subprocess.run(["git", "--git-dir", str(git), "cat-file", "--batch-check"], input="\n".join(s for s, _ in wanted).encode(),
                             capture_output=True, check=True).stdout.decode().splitlines()
    wanted = [w for w, line in zip(wanted, present) if not line.endswith("missing")]  # a mirror lacks its largest blobs
    blobs = subprocess.run(["git", "--git-dir", str(git), "cat-file", "--batch"], input="\n".join(s for s, _ in wanted).encode(),
                           capture_output=True, check=True).stdout
    at = 0
    for _, path in wanted:
        header_end = blobs.index(b"\n", at)
        size = int(blobs[at:header_end].split()[2])
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blobs[header_end + 1:header_end + 1 + size])
        at = header_end + 1 + size + 1
    dest.mkdir(parents=True, exist_ok=True)  # also for a repository with no Python source (notebooks only)
    marker.write_text(commit + "\n")
    return dest


def training_scripts(root: Path, limit: int) -> list[Path]:
    """Files that take optimizer steps (call ``backward()`` or ``zero_grad()``), outside tests and docs."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if TEST_DIRS & {p.lower() for p in path.relative_to(root).parts[:-1]}:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if "torch" in text and ("backward(" in text or "zero_grad(" in text):
            found.append(path)
    return found[:limit]


def project_classes(root: Path) -> dict[str, str]:
    """Class name -> its source, over the project; a name defined twice is left out (which one a script means is not known)."""
    classes: dict[str, str] = {}
    twice: set[str] = set()
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "class " not in text:
            continue
        for name, source in _classes_of(text).items():
            if name in classes:
                twice.add(name)
            classes[name] = source
    return {n: s for n, s in classes.items() if n not in twice}


def _classes_of(text: str) -> dict[str, str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    lines = text.splitlines()
    return {n.name: "\n".join(lines[n.lineno - 1:n.end_lineno]) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}


def check(path: Path, source: str, root: Path, codes: set[str], target: tuple[int, int]) -> list[Finding]:
    """What `trainwell check ROOT` reports in the file ``path`` of the project at ``root`` when it holds ``source``
    (every Python file of the checkout is part of the checked tree, so imports between them resolve as they do for
    a user): the file's own findings, and those the files importing it find in it when they walk its helpers with
    their own objects (``train_epoch(model, loader, optimizer)`` of ``training.py``, called from ``main.py``)."""
    project = ProjectIndex(_tree_files(root), [root], target, texts={path: source})
    found: dict[tuple[str, int, int | None], Finding] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for checked in (path, *_importers(root, path)):
            text = source if checked == path else checked.read_text(encoding="utf-8", errors="replace")
            for finding in runner.check_source(text, str(checked), codes, target, project=project)[0]:
                if finding.path == str(path):
                    found.setdefault((finding.code, finding.line, finding.column), finding)
    return list(found.values())


@functools.cache
def _tree_files(root: Path) -> tuple[Path, ...]:
    return tuple(sorted(root.rglob("*.py")))


@functools.cache
def _importers(root: Path, path: Path, limit: int = 4) -> tuple[Path, ...]:
    """The files of the tree that may import ``path``'s module, directly or through a package that re-exports it (at
    most ``limit``, nearest in the tree first): where `trainwell check ROOT` sees its helpers called."""
    dependencies = _dependencies(root)
    direct = [f for f in _tree_files(root) if f != path and str(path.resolve()) in dependencies.imports(f.resolve())]
    packages = [f for f in direct if f.name == "__init__.py"]
    found = [f for f in direct if f.name != "__init__.py"]
    for package in packages:
        found += [f for f in _tree_files(root) if f not in found and f != path and f.name != "__init__.py"
                  and str(package.resolve()) in dependencies.imports(f.resolve())]
    here = path.relative_to(root).parts[:-1]

    def distance(f: Path) -> tuple[int, str]:  # the import scan over-approximates (every `import utils`): nearest first
        parts = f.relative_to(root).parts[:-1]
        shared = next((i for i, (a, b) in enumerate(zip(parts, here)) if a != b), min(len(parts), len(here)))
        return len(parts) + len(here) - 2 * shared, str(f)

    return tuple(sorted(found, key=distance)[:limit])


@functools.cache
def _dependencies(root: Path) -> Dependencies:
    return Dependencies(str(f.resolve()) for f in _tree_files(root))


def run_repo(repo: str, root: Path, codes: set[str], per_operator: int, limit: int,
             only: set[str] | None = None) -> tuple[list[Result], list[tuple[str, Finding]]]:
    config = config_mod.load(root)
    classes = project_classes(root)
    results, clean_findings = [], []
    for path in training_scripts(root, limit):
        source = path.read_text(encoding="utf-8", errors="replace")
        try:
            script = Script(source, classes)
        except (SyntaxError, ValueError, RecursionError):
            continue
        target = config.declared_for(path) or config_mod.DEFAULT_TARGET
        clean = check(path, source, root, codes, target)
        relative = path.relative_to(root).as_posix()
        clean_findings += [(repo, f) for f in clean if CATALOG[f.code].default_enabled]
        before = Counter(f.code for f in clean)
        for mutant in mutants(script, per_operator, only):
            if mutant.code not in codes:
                results.append(Result(repo, relative, mutant, "no-rule"))
                continue
            if any(f.code == mutant.code and f.line == mutant.line and f.path == str(path) for f in clean):
                results.append(Result(repo, relative, mutant, "dropped"))
                continue
            after = Counter(f.code for f in check(path, mutant.source, root, codes, target))
            outcome = "found" if after[mutant.code] > before[mutant.code] else "missed"
            diff = "" if outcome == "found" else "".join(list(difflib.unified_diff(
                source.splitlines(keepends=True), mutant.source.splitlines(keepends=True), n=2))[2:14])
            results.append(Result(repo, relative, mutant, outcome, diff))
    return results, clean_findings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, type=Path, help="folder for the checkouts (and bare clones without --mirror)")
    parser.add_argument("--mirror", type=Path, help="folder of owner+name git directories to read instead of GitHub")
    parser.add_argument("--repo", action="append", help="only this owner/name (repeatable)")
    parser.add_argument("--operator", action="append", choices=sorted(OPERATORS), metavar="NAME",
                        help="only this operator (repeatable; default: all)")
    parser.add_argument("--per-operator", type=int, default=3, help="mutants per operator and script (default 3)")
    parser.add_argument("--max-scripts", type=int, default=40, help="training scripts per repository (default 40)")
    parser.add_argument("--tsv", type=Path, help="write every mutant's outcome as TSV")
    parser.add_argument("--misses", type=Path, help="write the misses, grouped by operator, as Markdown")
    args = parser.parse_args()
    repos = [(r, c) for r, c in REPOS if not args.repo or r in args.repo]
    if args.repo and len(repos) != len(set(args.repo)):
        parser.error(f"--repo: unknown repository; choose from {', '.join(r for r, _ in REPOS)}")
    args.cache.mkdir(parents=True, exist_ok=True)
    codes = runner.resolve_codes(None, None) | {code for code, _ in OPERATORS.values() if code in CATALOG}
    start = time.perf_counter()
    results: list[Result] = []
    clean: list[tuple[str, Finding]] = []
    for repo, commit in repos:
        root = checkout(repo, commit, args.cache, args.mirror)
        got, findings = run_repo(repo, root, codes, args.per_operator, args.max_scripts, set(args.operator or ()))
        results += got
        clean += [(repo, f) for _, f in findings]
    elapsed = time.perf_counter() - start
    report(results, clean, args.cache, len(repos), elapsed)
    if args.tsv:
        write_tsv(args.tsv, results)
    if args.misses:
        write_misses(args.misses, results)
    return 0


def report(results: list[Result], clean: list[tuple[str, Finding]], cache: Path, repos: int, elapsed: float) -> None:
    judged = [r for r in results if r.outcome in {"found", "missed"}]
    by_code: dict[str, Counter[str]] = defaultdict(Counter)
    for r in judged:
        by_code[r.mutant.code][r.outcome] += 1
    print(f"{'code':7s} {'mutants':>7s} {'found':>6s} {'recall':>7s}")
    for code in sorted(by_code):
        found, total = by_code[code]["found"], sum(by_code[code].values())
        print(f"{code:7s} {total:7d} {found:6d} {found / total:7.0%}")
    found = sum(r.outcome == "found" for r in judged)
    print(f"{'total':7s} {len(judged):7d} {found:6d} {found / max(len(judged), 1):7.0%}   "
          f"({repos} repositories, {len({(r.repo, r.path) for r in results})} scripts mutated, "
          f"{sum(r.outcome == 'dropped' for r in results)} dropped: already reported on that line; {elapsed:.0f} s)")
    unruled = Counter(r.mutant.code for r in results if r.outcome == "no-rule")
    if unruled:
        print(f"mutants of codes the installed checker has no static rule for: {', '.join(f'{c} {n}' for c, n in sorted(unruled.items()))}")
    missing = sorted({code for code, _ in OPERATORS.values()} - set(by_code) - set(unruled))
    if missing:
        print(f"codes with operators but no mutant in this corpus: {', '.join(missing)}")
    print("\nmisses:")
    for r in judged:
        if r.outcome == "missed":
            print(f"  {r.repo}/{r.path}:{r.mutant.line}  {r.mutant.code}  {r.mutant.operator}")
    print(f"\nclean findings ({len(clean)}, for triage):")
    for repo, f in clean:
        print(f"  {repo}/{Path(f.path).resolve().relative_to((cache / repo.replace('/', '+')).resolve()).as_posix()}:{f.line}  {f.code}  {f.message[:110]}")


def write_tsv(target: Path, results: list[Result]) -> None:
    with target.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(["repo", "path", "line", "code", "operator", "outcome"])
        for r in results:
            writer.writerow([r.repo, r.path, r.mutant.line, r.mutant.code, r.mutant.operator, r.outcome])


def write_misses(target: Path, results: list[Result]) -> None:
    """The misses grouped by the mistake's shape (code and operator), each with the diff that made it."""
    groups: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for r in results:
        if r.outcome == "missed":
            groups[(r.mutant.code, r.mutant.operator)].append(r)
    judged = [r for r in results if r.outcome in {"found", "missed"}]
    lines = ["# Misses of `benchmarks/mutations.py`", "",
             f"{sum(r.outcome == 'found' for r in judged)} of {len(judged)} mutants found. Each block: the injected mistake "
             "(a diff against the public file at its pinned commit); `trainwell check` stayed silent on its code.", ""]
    for (code, operator), misses in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0])):
        lines += [f"## {code} {operator}: {len(misses)} missed", ""]
        for r in misses:
            lines += [f"- `{r.repo}/{r.path}:{r.mutant.line}`", "", "```diff", r.diff.rstrip("\n"), "```", ""]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
