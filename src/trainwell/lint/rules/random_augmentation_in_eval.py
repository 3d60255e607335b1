"""TW405: validation or test data goes through a random augmentation (usually the training transform reused).

Premises, each read from the file: a torchvision transform built here holds a
random operation (RandomCrop, RandomHorizontalFlip, ColorJitter, RandAugment...);
it is the ``transform=`` of a dataset that is evaluation data (``train=False``,
``split='val'``/``'test'``, or a loader over it that only feeds forward passes
with no backward, in loops or in a one-line ``sum(... for x, y in loader)``); that dataset never feeds a training step; and the loop that
evaluates it runs one forward per batch (several views averaged is
deliberate test-time augmentation, which is silent).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of, kwarg
from trainwell.lint.rules._data import (
    loader_argument,
    loader_calls,
    loops_over,
    single_value,
    trains,
)
from trainwell.lint.syntax import walk

CODE = "TW405"
RANDOM = {
    "RandomCrop", "RandomResizedCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation", "RandomAffine",
    "RandomPerspective", "ColorJitter", "RandomErasing", "RandAugment", "AutoAugment", "TrivialAugmentWide", "AugMix",
    "RandomGrayscale", "RandomApply", "RandomChoice", "RandomOrder", "RandomInvert", "RandomPosterize", "RandomSolarize",
    "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize", "GaussianBlur", "ElasticTransform", "RandomZoomOut",
    "RandomIoUCrop", "RandomPhotometricDistort", "ScaleJitter", "RandomShortestSize", "RandomResize", "GaussianNoise",
    "RandomChannelPermutation",
}
_COMPOSE = {"Compose", "RandomOrder"}
_EVAL_SPLITS = {"val", "valid", "validation", "test", "eval", "dev"}
# torchvision dataset -> the position of `transform` in its signature
_POSITIONAL = {"ImageFolder": 1, "MNIST": 2, "FashionMNIST": 2, "KMNIST": 2, "CIFAR10": 2, "CIFAR100": 2}


def check(ctx: FileContext) -> Iterator[Finding]:
    if "torchvision" not in ctx.source:
        return
    reported: set[int] = set()
    for dataset in ctx.calls:
        transform = _transform_argument(ctx, dataset)
        randoms = _random_ops(ctx, transform) if transform is not None else []
        if not randoms:
            continue
        keys = _dataset_keys(ctx, dataset)
        loaders = [(k, c) for k, c in loader_calls(ctx) if _reads(ctx, c, dataset, keys)]
        loops = [f for key, _ in loaders for f in loops_over(ctx, key)]
        if any(trains(f) for f in loops) or any(_tta(f) for f in loops):
            continue
        evaluated = [f for f in loops if any(e.kind == ev.FORWARD for e in f.events)]
        in_expressions = any(_evaluated_in_comprehension(ctx, key) for key, _ in loaders)
        if not (_declared_eval(ctx, dataset) or (evaluated and len(evaluated) == len(loops))
                or (in_expressions and not loops)):
            continue
        where = loaders[0][1] if loaders else dataset
        if id(where) in reported:
            continue
        reported.add(id(where))
        names = ", ".join(randoms)
        yield ctx.finding(
            CODE, where,
            f"`{ctx.snippet(where)}` reads evaluation data through `{ctx.snippet(transform)}`, which is random ({names}): "  # type: ignore[arg-type]
            "each evaluation sees different random views of the same samples, so validation metrics are noisy, biased "
            "and not comparable between epochs.",
            "Give evaluation data a deterministic transform (Resize / CenterCrop / ToTensor / Normalize); keep the "
            "random augmentation for the training set.",
        )


def _transform_argument(ctx: FileContext, call: ast.Call) -> ast.expr | None:
    """``transform=``, or the position torchvision's common datasets give it."""
    given = kwarg(call, "transform")
    if given is not None:
        return given
    qual = ctx.call_name(call) or ""
    index = _POSITIONAL.get(qual.rsplit(".", 1)[-1]) if qual.startswith("torchvision.datasets") else None
    return call.args[index] if index is not None and len(call.args) > index else None


def _random_ops(ctx: FileContext, node: ast.expr, depth: int = 0) -> list[str]:
    """The random torchvision operations ``node`` (a transform or a key holding one) applies."""
    value = single_value(ctx, node)
    if value is not None and value is not node and key_of(value) is not None and depth <= 4:
        return _random_ops(ctx, value, depth + 1)  # `val_tf = train_tf`
    if not isinstance(value, ast.Call) or depth > 4:
        return []
    qual = ctx.call_name(value) or ""
    if not qual.startswith("torchvision.transforms"):
        return []
    last = qual.rsplit(".", 1)[-1]
    if last in _COMPOSE and value.args and isinstance(value.args[0], (ast.List, ast.Tuple)):
        found = [op for item in value.args[0].elts for op in _random_ops(ctx, item, depth + 1)]
        return found + ([last] if last in RANDOM and found else [])
    if last in RANDOM and not _never(value):
        return [last]
    return []


def _never(call: ast.Call) -> bool:
    """``RandomHorizontalFlip(p=0)``: a random operation switched off."""
    p = kwarg(call, "p")
    return isinstance(p, ast.Constant) and p.value in (0, 0.0)


def _dataset_keys(ctx: FileContext, call: ast.Call) -> set[str]:
    keys = set()
    for node in ctx.assigns:
        if node.value is call:
            keys.update(k for k in (key_of(t) for t in node.targets) if k is not None)
    return keys


def _reads(ctx: FileContext, loader: ast.Call, dataset: ast.Call, keys: set[str]) -> bool:
    given = loader_argument(loader, "dataset")
    return given is dataset or key_of(given) in keys


def _declared_eval(ctx: FileContext, call: ast.Call) -> bool:
    train = kwarg(call, "train")
    qual = ctx.call_name(call) or ""
    if train is None and qual.rsplit(".", 1)[-1] in ("MNIST", "FashionMNIST", "KMNIST", "CIFAR10", "CIFAR100") and len(call.args) > 1:
        train = call.args[1]
    if isinstance(train, ast.Constant) and train.value is False:
        return True
    split = kwarg(call, "split")
    return isinstance(split, ast.Constant) and isinstance(split.value, str) and split.value.lower() in _EVAL_SPLITS


def _evaluated_in_comprehension(ctx: FileContext, loader: str) -> bool:
    """``sum(... model(x) ... for x, y in loader)``: a one-line evaluation pass (one forward per batch)."""
    for node in ctx.nodes:
        if not isinstance(node, (ast.GeneratorExp, ast.ListComp)) or len(node.generators) != 1:
            continue
        source = node.generators[0].iter
        if isinstance(source, ast.Call) and key_of(source.func) in ("enumerate", "tqdm") and source.args:
            source = source.args[0]
        if key_of(source) != loader:
            continue
        forwards = [c for c in walk(node.elt) if isinstance(c, ast.Call) and ctx.is_model(key_of(c.func))]
        if len(forwards) == 1:
            return True
    return False


def _tta(frame: ev.Frame) -> bool:
    """Test-time augmentation: several forward passes per batch, or a forward inside a loop over views."""
    forwards = frame.of(ev.FORWARD)
    if len(forwards) > 1 or any(f.frame is not frame for f in forwards):
        return True
    comprehensions = [n for n in walk(frame.node) if isinstance(n, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp))]
    return any(f.node is sub for c in comprehensions for sub in walk(c) for f in forwards)
