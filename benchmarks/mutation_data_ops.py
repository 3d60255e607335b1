"""Mutation operators for losses and metrics, data, modules and I/O (TW3xx, TW4xx, TW5xx).

Each makes, in a working training script, the one mistake a person makes that
commits one catalog bug, and only where that bug's premises hold there (the
dataset's size leaves a smaller last batch, the loader drives several epochs,
the model is moved to a device...); every mutant must parse.
"""

from __future__ import annotations

import ast
from typing import Iterator

from mutation_premises import Operator, assigned, distributed, is_loss_call, registry, siblings, step_blocks, training_loop
from mutation_script import Mutant, Script, callee, receiver

OPERATORS: dict[str, tuple[str, Operator]] = {}  # name -> (code, operator)
operator = registry(OPERATORS)
DATASET_SIZES = {"MNIST": (60000, 10000), "FashionMNIST": (60000, 10000), "KMNIST": (60000, 10000),
                 "CIFAR10": (50000, 10000), "CIFAR100": (50000, 10000), "SVHN": (73257, 26032)}  # (train, test)


# -- loss and metrics ---------------------------------------------------------------
def _loss_calls(script: Script, classes: set[str], functions: set[str]) -> Iterator[ast.Call]:
    for call in script.calls:
        if call.args and (callee(call) in functions and receiver(call) in {"F", "nn.functional", "torch.nn.functional"}
                          or isinstance(call.func, ast.Name | ast.Attribute) and script.only_built_with(ast.unparse(call.func), classes)):
            yield call


@operator("TW301", "softmax-before-cross-entropy")


def softmax_before_cross_entropy(script: Script) -> Iterator[Mutant | None]:
    for call in _loss_calls(script, {"CrossEntropyLoss"}, {"cross_entropy"}):
        if "import torch" in script.source and training_loop(script, call) is not None:
            yield script.mutant("TW301", "softmax-before-cross-entropy", call,
                                script.replace(call.args[0], f"torch.softmax({ast.unparse(call.args[0])}, dim=1)"))


@operator("TW301", "sigmoid-before-bce-with-logits")


def sigmoid_before_bce_with_logits(script: Script) -> Iterator[Mutant | None]:
    for call in _loss_calls(script, {"BCEWithLogitsLoss"}, {"binary_cross_entropy_with_logits"}):
        if "import torch" in script.source and training_loop(script, call) is not None:
            yield script.mutant("TW301", "sigmoid-before-bce-with-logits", call,
                                script.replace(call.args[0], f"torch.sigmoid({ast.unparse(call.args[0])})"))


@operator("TW302", "mean-of-batch-means")


def mean_of_batch_means(script: Script) -> Iterator[Mutant | None]:
    """A sum weighted by batch size over the samples becomes a mean of batch means over the batches:
    ``total += loss.item() * x.size(0)`` (or a loss with ``reduction='sum'`` / ``size_average=False``) ...
    ``total / len(loader.dataset)`` becomes ``total += loss.item()`` ... ``/ len(loader)``; a count of correct
    predictions (``correct += pred.eq(y).sum()``) ... ``100. * correct / len(loader.dataset)`` becomes a per-batch
    accuracy (``pred.eq(y).float().mean()``) ... ``/ len(loader)``. Only over a loader whose last batch is smaller."""
    for node in ast.walk(script.tree):
        if not (isinstance(node, ast.Call) and callee(node) == "len" and node.args and isinstance(node.args[0], ast.Attribute)
                and node.args[0].attr == "dataset"):
            continue
        loader = ast.unparse(node.args[0].value)
        division = script.parent.get(node)
        total = division.left if isinstance(division, ast.BinOp) and isinstance(division.op, ast.Div) and division.right is node \
            else division.target if isinstance(division, ast.AugAssign) and isinstance(division.op, ast.Div) else None
        while isinstance(total, ast.BinOp) and isinstance(total.op, ast.Mult):  # `100. * correct / len(loader.dataset)`
            total = total.right if isinstance(total.left, ast.Constant) else total.left if isinstance(total.right, ast.Constant) else None
        if total is None or not _uneven_last_batch(script, loader):
            continue
        for add in ast.walk(script.function_of(node)):
            if isinstance(add, ast.AugAssign) and isinstance(add.op, ast.Add) and ast.unparse(add.target) == ast.unparse(total) \
                    and any(loader in ast.unparse(loop.iter) for loop in script.loops_of(add) if isinstance(loop, ast.For)):
                weighted = _unweighted(script, add.value)
                if weighted is not None:
                    yield script.mutant("TW302", "mean-of-batch-means", add, weighted + script.replace(node, f"len({loader})"))
                    break


def _unweighted(script: Script, value: ast.AST) -> list[tuple[int, int, list[str]]] | None:
    """The edit that turns a batch-size-weighted term into a batch mean, if ``value`` is one."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        for keep, size in ((value.left, value.right), (value.right, value.left)):
            text = ast.unparse(size)
            if "size(0)" in text or "shape[0]" in text or text.startswith("len("):
                return script.replace(value, ast.unparse(keep)) if value.lineno == value.end_lineno else None
    for call in ast.walk(value):
        for name, summed in (("reduction", "sum"), ("size_average", False)):
            if isinstance(call, ast.Call) and any(k.arg == name and isinstance(k.value, ast.Constant) and k.value.value == summed
                                                   for k in call.keywords) and call.lineno == call.end_lineno:
                return script.drop_keyword(call, name)
    counted = value.func.value if isinstance(value, ast.Call) and callee(value) == "item" and not value.args else value
    if isinstance(counted, ast.Call) and callee(counted) == "sum" and not counted.args and not counted.keywords \
            and any(isinstance(n, ast.Compare) or isinstance(n, ast.Call) and callee(n) == "eq" for n in ast.walk(counted.func)) \
            and counted.lineno == counted.end_lineno:
        return script.replace(counted, f"{ast.unparse(counted.func.value)}.float().mean()")  # a count -> the batch's accuracy
    return None


@operator("TW115", "accumulate-without-last-step")


def accumulate_without_last_step(script: Script) -> Iterator[Mutant | None]:
    """Gradient accumulation added to a per-batch step the way tutorials add it: ``(loss / k).backward()`` every batch,
    clip, step and clear when ``(i + 1) % k == 0`` with ``i`` from ``enumerate(loader)`` (added when the loop has none),
    where the loader's number of batches is known and k does not divide it, and nothing else clears the gradients:
    each epoch's last micro-batches are added into the next epoch's first step."""
    for block, back, step in step_blocks(script):
        loop = script.loops_of(step)[:1]
        if not loop or block is not loop[0].body or not isinstance(loop[0], ast.For):
            continue
        loop_edits, index, loader = _enumerated(script, loop[0])
        zeros = siblings(script, block, lambda c: callee(c) == "zero_grad")
        clears = [c for c in ast.walk(script.tree) if isinstance(c, ast.Call) and callee(c) == "zero_grad"]
        batches = _batches(script, loader) if index else None
        loss = back.value.func.value if isinstance(back.value.func, ast.Attribute) else None
        if len(zeros) != 1 or len(clears) != 1 or not batches or not isinstance(loss, ast.Name):
            continue
        k = next(k for k in (4, 3, 5, 7) if batches % k)
        indent = script.indent(step)
        between = [s for s in block if (back.end_lineno or back.lineno) < s.lineno < step.lineno]  # a clip, an unscale_
        guarded = [f"{indent}if ({index} + 1) % {k} == 0:\n",
                   *(line for stmt in [*between, step, zeros[0]] for line in script.text_at(stmt, indent + "    "))]
        yield script.mutant("TW115", "accumulate-without-last-step", step,
                            loop_edits + [edit for stmt in [zeros[0], *between] for edit in script.delete(stmt)]
                            + script.replace(loss, f"({loss.id} / {k})") + [(step.lineno - 1, step.end_lineno or step.lineno, guarded)])


def _enumerated(script: Script, loop: ast.For) -> tuple[list[tuple[int, int, list[str]]], str | None, str]:
    """(the edits that make ``loop`` count its batches, the counter's name, the loader's text): ``for i, b in
    enumerate(loader)`` as it is; ``for b in loader`` becomes ``for i, b in enumerate(loader)`` (a name the function
    does not use). No counter for anything else."""
    if isinstance(loop.iter, ast.Call) and callee(loop.iter) == "enumerate" and len(loop.iter.args) == 1 and not loop.iter.keywords:
        counter = loop.target.elts[0] if isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2 else None
        return [], counter.id if isinstance(counter, ast.Name) else None, ast.unparse(loop.iter.args[0])
    if not isinstance(loop.iter, ast.Name | ast.Attribute):
        return [], None, ""
    used = {n.id for n in ast.walk(script.function_of(loop)) if isinstance(n, ast.Name)}
    index = next(name for name in ("i", "batch_idx", "micro_step") if name not in used)
    loader = ast.unparse(loop.iter)
    edit = script.splice((loop.target.lineno, loop.target.col_offset), (loop.iter.end_lineno, loop.iter.end_col_offset),
                         f"{index}, {ast.unparse(loop.target)} in enumerate({loader})")
    return edit, index, loader


def _batches(script: Script, loader: str) -> int | None:
    """The number of batches of ``loader`` where its dataset's size and its batch size are known."""
    built = script.built_with(loader, {"DataLoader"})
    if built is None:
        return None
    size_arg = next((k.value for k in built.keywords if k.arg == "batch_size"), built.args[1] if len(built.args) > 1 else None)
    batch = script.int_value(size_arg) if size_arg is not None else 1
    size = _dataset_size(script, built)
    if not batch or not size:
        return None
    drop = next((k.value for k in built.keywords if k.arg == "drop_last"), ast.Constant(False))
    if not isinstance(drop, ast.Constant):
        return None
    return size // batch if drop.value else -(-size // batch)


def _uneven_last_batch(script: Script, loader: str) -> bool:
    built = script.built_with(loader, {"DataLoader"})
    if built is None or any(k.arg == "drop_last" and not (isinstance(k.value, ast.Constant) and k.value.value is False) for k in built.keywords):
        return False
    size_arg = next((k.value for k in built.keywords if k.arg == "batch_size"), built.args[1] if len(built.args) > 1 else None)
    batch = script.int_value(size_arg) if size_arg is not None else 1
    size = _dataset_size(script, built)
    return bool(batch and batch > 1 and size and size % batch)


def _dataset_size(script: Script, loader: ast.Call) -> int | None:
    """The length of a loader's dataset where it is a torchvision dataset of known size (train or test split)."""
    dataset = next((k.value for k in loader.keywords if k.arg == "dataset"), loader.args[0] if loader.args else None)
    made = [dataset] if isinstance(dataset, ast.Call) else assigned(script, ast.unparse(dataset)) if dataset is not None else []
    sizes = set()
    for call in made:
        if isinstance(call, ast.Call) and callee(call) in DATASET_SIZES:
            train = next((k.value for k in call.keywords if k.arg == "train"), None)
            if isinstance(train, ast.Constant) and isinstance(train.value, bool):
                sizes.add(DATASET_SIZES[callee(call)][0 if train.value else 1])
    return sizes.pop() if len(sizes) == 1 else None


@operator("TW303", "softmax-into-nll")


def softmax_into_nll(script: Script) -> Iterator[Mutant | None]:
    if "nll_loss" not in script.source and "NLLLoss" not in script.source:
        return
    for call in script.calls:
        if callee(call) == "log_softmax" and isinstance(call.func, ast.Attribute) and isinstance(script.parent.get(call), ast.Return):
            yield script.mutant("TW303", "softmax-into-nll", call, script.replace(call.func, ast.unparse(call.func)[: -len("log_softmax")] + "softmax"))


@operator("TW304", "drop-output-squeeze")


def drop_output_squeeze(script: Script) -> Iterator[Mutant | None]:
    for call in _loss_calls(script, {"MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss"}, {"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"}):
        first = call.args[0]
        if isinstance(first, ast.Call) and callee(first) == "squeeze" and len(call.args) > 1 \
                and [ast.unparse(a) for a in first.args] in (["1"], ["-1"]) and "squeeze" not in ast.unparse(call.args[1]) \
                and training_loop(script, call) is not None:
            yield script.mutant("TW304", "drop-output-squeeze", call, script.replace(first, ast.unparse(first.func.value)))


@operator("TW304", "drop-label-column")


def drop_label_column(script: Script) -> Iterator[Mutant | None]:
    """``valid = Tensor(imgs.size(0), 1).fill_(1.0)`` (also ``torch.ones(n, 1)``, ``torch.full((n, 1), v)``), the target
    of an element-wise loss whose prediction is a model's ``[N, 1]`` output (a GAN discriminator's), built without its
    column: ``Tensor(imgs.size(0)).fill_(1.0)`` is ``[N]``, and the loss compares ``[N, 1]`` with ``[N]`` over an N x N
    grid (PyTorch only warns)."""
    targets = {ast.unparse(call.args[1]) for call in _loss_calls(script, {"MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss"},
                                                                  {"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"})
               if len(call.args) > 1 and training_loop(script, call) is not None and _model_output(script, call.args[0])}
    for node in ast.walk(script.tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and ast.unparse(node.targets[0]) in targets):
            continue
        call = node.value  # the constructor itself, under `Variable(...)`, `.fill_(v)`, `.to(device)`: not a term of a sum
        while isinstance(call, ast.Call) and (callee(call) == "Variable" and call.args or callee(call) in ("fill_", "to", "cuda", "float")):
            call = call.args[0] if callee(call) == "Variable" else call.func.value if isinstance(call.func, ast.Attribute) else None
        if not isinstance(call, ast.Call):
            continue
        sizes = call.args[0].elts if callee(call) == "full" and call.args and isinstance(call.args[0], ast.Tuple) else call.args
        if len(sizes) == 2 and isinstance(sizes[1], ast.Constant) and sizes[1].value == 1 and not isinstance(sizes[0], ast.Constant) \
                and (callee(call) in ("ones", "zeros", "full") or "Tensor" in callee(call)) and call.lineno == call.end_lineno:
            yield script.mutant("TW304", "drop-label-column", node, script.splice(
                (sizes[0].end_lineno, sizes[0].end_col_offset), (sizes[1].end_lineno, sizes[1].end_col_offset), ""))


def _model_output(script: Script, node: ast.expr) -> bool:
    """A model's forward (``D(x)``), or a name assigned one in the same function (``validity = D(x, labels)``,
    ``validity, _, _ = D(x)``)."""
    if isinstance(node, ast.Call):
        return script.is_model(ast.unparse(node.func))
    if not isinstance(node, ast.Name):
        return False
    scope = script.function_of(node)
    made = [n.value for n in ast.walk(scope) if isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == node.id or isinstance(t, ast.Tuple) and any(isinstance(e, ast.Name) and e.id == node.id for e in t.elts)
        for t in n.targets)]
    return bool(made) and all(isinstance(v, ast.Call) and script.is_model(ast.unparse(v.func)) for v in made)


@operator("TW305", "delete-ignore-index")


def delete_ignore_index(script: Script) -> Iterator[Mutant | None]:
    """Drop an ``ignore_index`` that names the padding (``pad_idx``, ``special_symbols["<pad>"]``) or equals a value
    the project pads its targets with (``.fill_(0)``, ``padding_value=0``); not where the script takes the padding out
    of the targets itself before the loss (``target[target != pad]``), which then trains nothing on padding."""
    padding = _padding_values(script)
    for call in script.calls:
        value = next((k.value for k in call.keywords if k.arg == "ignore_index"), None)
        if value is not None and callee(call) in {"CrossEntropyLoss", "NLLLoss", "cross_entropy", "nll_loss"} \
                and ("pad" in ast.unparse(value).lower() or ast.unparse(value) in padding) and not _targets_masked(script):
            yield script.mutant("TW305", "delete-ignore-index", call, script.drop_keyword(call, "ignore_index"))


def _padding_values(script: Script) -> set[str]:
    """The values the script and the project's classes fill or pad tensors with, as source text."""
    found = set()
    for text in [script.source, *script.classes.values()]:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            if callee(call) == "fill_" and len(call.args) == 1:
                found.add(ast.unparse(call.args[0]))
            found |= {ast.unparse(k.value) for k in call.keywords if k.arg == "padding_value"}
    return found


def _targets_masked(script: Script) -> bool:
    """Whether a loss target is first cut down by a mask (``target = target[mask]``)."""
    targets = {ast.unparse(c.args[1]) for c in script.calls if len(c.args) > 1 and is_loss_call(script, c)}
    return any(isinstance(n, ast.Assign) and isinstance(n.value, ast.Subscript) and "mask" in ast.unparse(n.value.slice).lower()
               and any(ast.unparse(t) in targets for t in n.targets) for n in ast.walk(script.tree))


def _feeds_training(script: Script, loader: str) -> bool:
    return any(isinstance(loop, ast.For) and loader in ast.unparse(loop.iter) and script.contains(loop, "backward") for loop in ast.walk(script.tree))


@operator("TW306", "eval-loader-drop-last")


def eval_loader_drop_last(script: Script) -> Iterator[Mutant | None]:
    for node in ast.walk(script.tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call) and callee(node.value) == "DataLoader":
            name, call = ast.unparse(node.targets[0]), node.value
            size = next((k.value for k in call.keywords if k.arg == "batch_size"), None)
            if any(w in name.lower() for w in ("val", "test", "eval")) and not _feeds_training(script, name) \
                    and not any(k.arg == "drop_last" for k in call.keywords) and size is not None and script.int_value(size) != 1 \
                    and any(name in ast.unparse(loop.iter) for loop in ast.walk(script.tree) if isinstance(loop, ast.For)):
                known = _dataset_size(script, call)
                if known is None or known % (script.int_value(size) or known + 1):
                    yield script.mutant("TW306", "eval-loader-drop-last", call, script.add_keyword(call, "drop_last=True"))


# -- data ------------------------------------------------------------------------------
def _drives_epochs(script: Script, loader: str) -> bool:
    for loop in ast.walk(script.tree):
        if isinstance(loop, ast.For) and loader in ast.unparse(loop.iter) and script.contains(loop, "backward"):
            if script.loops_of(loop) or script.called_in_loop(script.function_of(loop)):
                return True
    return False


@operator("TW401", "delete-shuffle")


def delete_shuffle(script: Script) -> Iterator[Mutant | None]:
    for node in ast.walk(script.tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call) and callee(node.value) == "DataLoader":
            call = node.value
            shuffle = next((k.value for k in call.keywords if k.arg == "shuffle"), None)
            if isinstance(shuffle, ast.Constant) and shuffle.value is True and not any(k.arg in {"sampler", "batch_sampler"} for k in call.keywords) \
                    and _drives_epochs(script, ast.unparse(node.targets[0])):
                yield script.mutant("TW401", "delete-shuffle", call, script.drop_keyword(call, "shuffle"))


def _model_on_device(script: Script) -> bool:
    """A model of the project is moved with ``.to(...)`` / ``.cuda()`` (where the mutated batch would stay behind)."""
    models = {ast.unparse(t) for n in ast.walk(script.tree) if isinstance(n, ast.Assign) for t in n.targets if script.is_model(ast.unparse(t))}
    moved = {ast.unparse(t) for n in ast.walk(script.tree) if isinstance(n, ast.Assign) and (".to(" in ast.unparse(n.value)
             or ".cuda(" in ast.unparse(n.value)) for t in n.targets}
    return any(m in moved or f"{m}.to(" in script.source or f"{m}.cuda(" in script.source for m in models)


def _moves(script: Script) -> Iterator[tuple[ast.Call, str]]:
    """``y.to(device)`` / ``y.cuda()`` calls on a plain name, and that name."""
    for call in script.calls:
        if callee(call) in {"to", "cuda"} and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
                and (callee(call) == "cuda" or call.args and isinstance(call.args[0], ast.Name | ast.Attribute)
                     and "device" in ast.unparse(call.args[0]) and not ast.unparse(call.args[0]).endswith(".device")):
            yield call, call.func.value.id


def _left_on_cpu(script: Script, role: str) -> Iterator[Mutant | None]:
    if not _model_on_device(script):
        return
    for call, name in _moves(script):
        loop = training_loop(script, call)
        if loop is None or role == "input" and "len" in name.lower():
            continue  # lengths are read on the host (`pack_padded_sequence` wants them there, `.tolist()`): no mismatch
        if not _loads_on_the_host(script, loop):
            continue  # a loader of unknown make (a parameter, a library's wrapper) may hand batches on the device
        roles, models = set(), set()
        for use in ast.walk(loop):
            places = [i for i, a in enumerate(getattr(use, "args", [])) if isinstance(use, ast.Call) and isinstance(a, ast.Name) and a.id == name]
            if places:
                roles.add(("label" if places[0] else "output") if is_loss_call(script, use)
                          else "input" if script.is_model(ast.unparse(use.func)) else "other")
                models.add(ast.unparse(use.func))
        moved_again = [m for m, n in _moves(script) if n == name and m is not call and training_loop(script, m) is loop]
        if role == "input" and any(_scattered(script, m) for m in models):
            continue  # DataParallel / DDP(device_ids=...) move the inputs to the model's device themselves
        if roles == {role} and not moved_again:
            stmt = script.statement(call)
            alone = isinstance(stmt, ast.Assign) and stmt.value is call and [ast.unparse(t) for t in stmt.targets] == [name]
            edit = script.delete(stmt) if alone and script.alone(stmt) else script.replace(call, name)
            yield script.mutant("TW403", f"{role}s-left-on-cpu", call, edit)


def _loads_on_the_host(script: Script, loop: ast.AST) -> bool:
    """Whether ``loop`` iterates a loader built with ``DataLoader(...)`` and no ``collate_fn`` or ``pin_memory_device``
    wherever it is made (the callers' argument when it is a parameter), never unpacked from another call
    (``model, optimizer, loader = engine.make_private(...)``): its batches come as loaded, on the CPU."""
    iterable = loop.iter if isinstance(loop, ast.For) else None
    while isinstance(iterable, ast.Call) and callee(iterable) in {"enumerate", "tqdm", "iter"} and iterable.args:
        iterable = iterable.args[0]
    if not isinstance(iterable, ast.Name | ast.Attribute):
        return False
    name = ast.unparse(iterable)
    made = script.constructors(name, script.function_of(loop))
    unpacked = any(isinstance(t, ast.Tuple | ast.List) and any(ast.unparse(e) == name for e in t.elts)
                   for n in ast.walk(script.tree) if isinstance(n, ast.Assign) for t in n.targets)
    return bool(made) and not unpacked and all(
        callee(c) == "DataLoader" and all(k.arg not in {"collate_fn", "pin_memory_device"} for k in c.keywords) for c in made)


def _scattered(script: Script, model: str) -> bool:
    """Whether ``model`` is wrapped in ``DataParallel`` (or ``DistributedDataParallel`` with ``device_ids``) on every
    path where it sits on a GPU: the wrap is unconditional, or under an ``if`` about CUDA with no ``else`` (the model
    then stays on the CPU). Under any other condition (the number of GPUs, ``args.distributed``) the unwrapped path
    still fails, and the mutant stays."""
    for node in ast.walk(script.tree):
        if not (isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == [model]):
            continue
        wrap = next((c for c in ast.walk(node.value) if isinstance(c, ast.Call) and (callee(c) == "DataParallel" or callee(c) in
                     {"DistributedDataParallel", "DDP"} and any(k.arg == "device_ids" for k in c.keywords))
                     and c.args and ast.unparse(c.args[0]) == model), None)
        if wrap is None:
            continue
        guards = [a for a in script.ancestors(node) if isinstance(a, (ast.If, ast.IfExp, ast.Try, ast.For, ast.While))]
        if not guards or len(guards) == 1 and isinstance(guards[0], ast.If) and not guards[0].orelse \
                and any(w in ast.unparse(guards[0].test) for w in ("cuda", "gpu")) and "len(" not in ast.unparse(guards[0].test):
            return True
    return False


@operator("TW403", "labels-left-on-cpu")


def labels_left_on_cpu(script: Script) -> Iterator[Mutant | None]:
    return _left_on_cpu(script, "label")


@operator("TW403", "inputs-left-on-cpu")


def inputs_left_on_cpu(script: Script) -> Iterator[Mutant | None]:
    return _left_on_cpu(script, "input")


@operator("TW405", "train-transform-in-eval")


def train_transform_in_eval(script: Script) -> Iterator[Mutant | None]:
    augmenting = [ast.unparse(t) for n in ast.walk(script.tree) if isinstance(n, ast.Assign) and "Random" in ast.unparse(n.value)
                  and "Compose" in ast.unparse(n.value) for t in n.targets]
    for call in script.calls:
        transform = next((k.value for k in call.keywords if k.arg == "transform"), None)
        train = next((k.value for k in call.keywords if k.arg == "train"), None)
        if transform is not None and isinstance(train, ast.Constant) and train.value is False and ast.unparse(transform) not in augmenting \
                and len(set(augmenting)) == 1:
            yield script.mutant("TW405", "train-transform-in-eval", call, script.replace(transform, augmenting[0]))


@operator("TW406", "delete-split-seed")


def delete_split_seed(script: Script) -> Iterator[Mutant | None]:
    resumes = "load_state_dict" in script.source or distributed(script)
    for call in script.calls:
        if resumes and callee(call) == "random_split" and any(k.arg == "generator" for k in call.keywords):
            yield script.mutant("TW406", "delete-split-seed", call, script.drop_keyword(call, "generator"))


# -- modules and I/O ------------------------------------------------------------------
@operator("TW501", "delete-super-init")


def delete_super_init(script: Script) -> Iterator[Mutant | None]:
    for cls in ast.walk(script.tree):
        if isinstance(cls, ast.ClassDef) and any(ast.unparse(b) in {"nn.Module", "torch.nn.Module", "Module"} for b in cls.bases):
            init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
            for stmt in init.body if init else []:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and callee(stmt.value) == "__init__" and script.alone(stmt):
                    yield script.mutant("TW501", "delete-super-init", stmt, script.delete(stmt))


@operator("TW502", "torch-load-weights-only-false")


def torch_load_weights_only_false(script: Script) -> Iterator[Mutant | None]:
    saved = {ast.unparse(c.args[1]) for c in script.calls if callee(c) == "save" and len(c.args) > 1}
    for call in script.calls:
        if callee(call) != "load" or receiver(call) != "torch" or call.args and ast.unparse(call.args[0]) in saved:
            continue  # a file this program saved itself is not untrusted input
        given = next((k for k in call.keywords if k.arg == "weights_only"), None)
        if given is not None and isinstance(given.value, ast.Constant) and given.value.value is True:
            yield script.mutant("TW502", "torch-load-weights-only-false", call, script.replace(given.value, "False"))
        elif given is None:
            yield script.mutant("TW502", "torch-load-weights-only-false", call, script.add_keyword(call, "weights_only=False"))


@operator("TW504", "delete-seed")


def delete_seed(script: Script) -> Iterator[Mutant | None]:
    """The one ``torch.manual_seed`` of a program that trains (a loop that runs backward and an optimizer step, itself
    or through the script's functions) deleted; a gradient check (backward with no step) is no training run."""
    seeds = list(script.expression_statements("manual_seed"))
    others = [c for c in script.calls if callee(c) in {"seed_everything", "set_seed", "manual_seed_all"}]
    torch_seeds = [(s, c) for s, c in seeds if receiver(c) == "torch"]
    trains = any(isinstance(loop, (ast.For, ast.While)) and script.reaches(loop, "backward") and script.reaches(loop, "step")
                 for loop in ast.walk(script.tree))
    if len(torch_seeds) == 1 and len(seeds) == 1 and not others and script.contains(script.tree, "backward") and trains:
        stmt, _ = torch_seeds[0]
        yield script.mutant("TW504", "delete-seed", stmt, script.delete(stmt))
