"""TW406: a random train/validation split without a fixed seed, recomputed in each process or on resume.

Premises, each read from the file: ``random_split`` (no seeded ``generator=``),
``train_test_split`` (no ``random_state``), a ``torch.randperm`` (no seeded
generator) or ``np.random.permutation`` sliced into parts; nothing in the file seeds the global generators
(any ``*seed*`` call silences the rule, except a Generator's own ``manual_seed``, which counts only for
the splits given that generator); the split is not saved nor broadcast;
and the file runs it more than once per experiment: in several processes
(``init_process_group``, DDP, ``mp.spawn``, a DistributedSampler, Lightning's
``strategy="ddp"``, Accelerate's ``Accelerator``) or in a run
that resumes from a checkpoint (``torch.load`` then ``load_state_dict``, Lightning's
``ckpt_path=``, Accelerate's ``load_state``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint.context import FileContext, key_of, kwarg, method_name
from trainwell.lint.rules._data import argument, qual_last, single_value
from trainwell.lint.syntax import walk

CODE = "TW406"
_DISTRIBUTED = {"init_process_group", "DistributedDataParallel", "DistributedSampler", "spawn", "start_processes"}
_SHARED = {"broadcast", "broadcast_object_list", "save", "dump", "savetxt", "to_csv", "write_text"}


def check(ctx: FileContext) -> Iterator[Finding]:
    if not any(w in ctx.source for w in ("random_split", "train_test_split", "randperm", "permutation")):
        return
    seeded = _seeded_globally(ctx)
    if seeded >= {"torch", "numpy"}:
        return
    repeated = _repeated(ctx)
    if repeated is None or _shared(ctx):
        return
    for call in ctx.calls:
        kind = _unseeded_split(ctx, call)
        if kind is None or ("numpy" if "train_test_split" in kind or "np.random" in kind else "torch") in seeded:
            continue
        yield ctx.finding(
            CODE, call,
            f"`{ctx.snippet(call)}` draws a new random {kind} on every run, and this script runs it {repeated}: "
            "each run (or rank) gets a different split, so samples trained on in one are validated in another.",
            "Seed the split: `generator=torch.Generator().manual_seed(0)` (random_split, randperm) or `random_state=0` "
            "(train_test_split); or compute it once, save the indices and reload them.",
        )


def _seeded_globally(ctx: FileContext) -> set[str]:
    """The global generators the file seeds: ``torch`` (``torch.manual_seed``), ``numpy`` (``np.random.seed``), or
    both for any other call that says seed (``seed_everything``, ``transformers.set_seed``, a project's
    ``set_seed``). ``g.manual_seed(0)`` seeds one generator: it makes only the splits given ``g`` reproducible;
    ``torch.cuda.manual_seed``, ``random.seed`` and a gym env's ``seed`` seed no generator a split draws from;
    ``initial_seed()`` only reads a seed, a Generator's ``seed()`` draws a fresh one for that generator, and the
    seeding inside a ``worker_init_fn`` runs in the loader's worker processes, not where the split is drawn."""
    seeded: set[str] = set()
    in_workers = _worker_init_nodes(ctx)
    for call in ctx.calls:
        name = (method_name(call) or key_of(call.func) or "").rsplit(".", 1)[-1]
        if "seed" not in name.lower() or name == "initial_seed" or id(call) in in_workers:
            continue
        qual = ctx.call_name(call) or ""
        if name == "seed" and isinstance(call.func, ast.Attribute) and _is_generator(ctx, call.func.value):
            continue
        if qual in ("torch.manual_seed", "torch.random.manual_seed"):
            seeded.add("torch")
        elif qual == "numpy.random.seed":
            seeded.add("numpy")
        elif name == "manual_seed" or qual.startswith(("torch.cuda.", "random.", "tensorflow.")) or (
                name == "seed" and "env" in (key_of(call.func) or "").lower()):
            continue  # a Generator's own seed, the CUDA generators, Python's or TensorFlow's, a gym environment's
        else:
            seeded |= {"torch", "numpy"}
    return seeded


def _worker_init_nodes(ctx: FileContext) -> set[int]:
    """The nodes of the functions of this file passed as a DataLoader's ``worker_init_fn``."""
    names = {key_of(kwarg(c, "worker_init_fn")) for c in ctx.calls if kwarg(c, "worker_init_fn") is not None} - {None}
    return {id(n) for name in names for fn in [ctx.functions.get(name) or ctx.nested_functions.get(name)] if fn is not None  # type: ignore[arg-type]
            for n in walk(fn)}


def _is_generator(ctx: FileContext, node: ast.expr) -> bool:
    """Whether ``node`` is (or names the one value of) a ``torch.Generator(...)``."""
    value = single_value(ctx, node)
    return isinstance(value, ast.Call) and qual_last(ctx, value) == "Generator"


def _repeated(ctx: FileContext) -> str | None:
    """How the split is recomputed: in several processes, or on resume; None when the file shows neither."""
    for call in ctx.calls:
        if qual_last(ctx, call) in _DISTRIBUTED or (method_name(call) == "init_process_group"):
            return "in every process (each rank draws its own split)"
        strategy = kwarg(call, "strategy")  # Lightning's Trainer(strategy="ddp"), Accelerate's Accelerator()
        if (isinstance(strategy, ast.Constant) and isinstance(strategy.value, str) and strategy.value.startswith(("ddp", "fsdp"))) \
                or (ctx.call_name(call) or "").startswith("accelerate") and qual_last(ctx, call) == "Accelerator":
            return "in every process (each rank draws its own split)"
    loads = [c for c in ctx.calls if (ctx.call_name(c) or "") == "torch.load"]
    if loads and any(method_name(c) == "load_state_dict" for c in ctx.calls):
        return "again when it resumes from a checkpoint"
    for call in ctx.calls:  # a framework resuming: Lightning's ckpt_path=, Accelerate's load_state()
        given = kwarg(call, "ckpt_path") or kwarg(call, "resume_from_checkpoint")
        if method_name(call) == "load_state" or (given is not None and not (isinstance(given, ast.Constant) and given.value is None)):
            return "again when it resumes from a checkpoint"
    return None


def _shared(ctx: FileContext) -> bool:
    """The file saves or broadcasts something: the split may be computed once and shared."""
    for call in ctx.calls:
        name = method_name(call) or ""
        qual = ctx.call_name(call) or ""
        if name in ("broadcast", "broadcast_object_list") or qual.endswith(("broadcast", "broadcast_object_list")):
            return True
        if name in ("save", "dump", "savetxt", "to_csv", "write_text") and any(
            isinstance(n, ast.Name) and ("split" in n.id.lower() or "indices" in n.id.lower() or "idx" in n.id.lower())
            for a in call.args for n in walk(a)
        ):
            return True
    return False


def _unseeded_split(ctx: FileContext, call: ast.Call) -> str | None:
    qual = ctx.call_name(call) or ""
    last = qual.rsplit(".", 1)[-1]
    if any(k.arg is None for k in call.keywords):
        return None
    if qual.startswith("torch") and last == "random_split":
        generator = argument(call, "generator", ("dataset", "lengths", "generator"))
        return "split (random_split)" if not _seeded_generator(ctx, generator) else None
    if qual.startswith("sklearn") and last == "train_test_split":
        state = kwarg(call, "random_state")
        return "split (train_test_split)" if state is None or (isinstance(state, ast.Constant) and state.value is None) else None
    if qual.startswith("torch") and last == "randperm" and not _seeded_generator(ctx, kwarg(call, "generator")):
        return "permutation (torch.randperm)" if _sliced_into_parts(ctx, call) else None
    if qual == "numpy.random.permutation":  # the global NumPy generator (a default_rng(seed) is a method call)
        return "permutation (np.random.permutation)" if _sliced_into_parts(ctx, call) else None
    return None


def _seeded_generator(ctx: FileContext, node: ast.expr | None) -> bool:
    """Anything but a missing generator or a bare ``torch.Generator()`` counts as seeded."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return False
    value = single_value(ctx, node)
    if isinstance(value, ast.Call) and qual_last(ctx, value) == "Generator":
        key = key_of(node)
        return key is not None and any(method_name(c) == "manual_seed" and key_of(c.func.value) == key for c in ctx.calls)  # type: ignore[attr-defined]
    return True


def _sliced_into_parts(ctx: FileContext, call: ast.Call) -> bool:
    """``perm = torch.randperm(n)`` whose slices ``perm[:k]`` and ``perm[k:]`` make two parts."""
    keys = {key_of(t) for a in ctx.assigns if a.value is call for t in a.targets} - {None}
    slices = [n for n in ctx.nodes if isinstance(n, ast.Subscript) and key_of(n.value) in keys and isinstance(n.slice, ast.Slice)]
    return any(s.slice.upper is not None and s.slice.lower is None for s in slices) and any(  # type: ignore[attr-defined]
        s.slice.lower is not None and s.slice.upper is None for s in slices)  # type: ignore[attr-defined]
