"""TW305: targets padded with a value that CrossEntropyLoss / NLLLoss does not ignore.

Premises, each read from the code: the target of a cross-entropy or NLL loss
comes (through reshapes, slices, the loop over a DataLoader whose ``collate_fn``
is a function of the file or of the data module that builds the loader, and the
methods of the project's own objects) from ``pad_sequence`` or ``F.pad`` with a
constant padding value, or from a tensor filled with a constant whose rows are
written in a loop; the loss's ``ignore_index`` is a literal (or the default
-100) different from it; the loss is reduced (``reduction='none'`` leaves room
for a mask, so it is silent).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from trainwell.diagnostic import Finding
from trainwell.lint.constants import values
from trainwell.lint.context import (
    FileContext,
    key_of,
    kwarg,
    method_name,
    strip_identity,
)
from trainwell.lint.dataflow import Element, definitions, instance_methods, reaching
from trainwell.lint.loss_calls import loss_calls
from trainwell.lint.rules._data import (
    argument,
    loader_argument,
    qual_last,
    single_value,
    value_of,
)
from trainwell.lint.syntax import walk

CODE = "TW305"
_KEEP = {"view", "reshape", "flatten", "contiguous", "long", "to", "cuda", "cpu", "clone", "detach", "int"}
_DEFAULT_IGNORE = -100
_PADDING_WORDS = ("pad", "fill_", "zeros(", "full(")


def check(ctx: FileContext) -> Iterator[Finding]:
    if not any(w in ctx.source for w in _PADDING_WORDS) \
            and not (ctx.project is not None and ctx.project.mentions(ctx, _PADDING_WORDS)):
        return  # nothing here, nor in the modules it imports, pads a tensor
    for call, loss, scope, source in [*((c, l, s, None) for c, l, _, s in loss_calls(ctx, {"CrossEntropyLoss", "NLLLoss"})),
                                       *_branch_losses(ctx)]:
        target = call.args[1] if len(call.args) > 1 else kwarg(call, "target")
        options = _loss_options(ctx, call, source)
        if target is None or options is None:
            continue
        ignore, reduction = options
        if reduction == "none":
            continue
        found = _pad_value(ctx, target, scope, call.lineno, 0)
        if found is not None and found[0] == ignore:
            continue
        if found is not None:
            value, pad = found
            home = ctx.home(pad)
            where = f"line {pad.lineno}" if home is ctx else f"{Path(home.path).name}:{pad.lineno}"  # type: ignore[attr-defined]
            evidence = f"are padded with {value} (`{ctx.snippet(pad, 40)}`, {where})"
        elif (masked := _padding_mask(ctx, target, scope, call.lineno, ignore, source or call)) is not None:
            value, pad = masked
            evidence = f"hold padding {value if value.lstrip('-').isdigit() else f'`{value}`'}: line {pad.lineno} masks " \
                       f"it out (`{ctx.snippet(pad, 40)}`)"
        else:
            continue
        effect = (f"every padding position is trained as a real class {value}, and padding dominates the loss of short sequences"
                  if _backpropagates(ctx, scope) else
                  f"every padding position counts as a real class {value}, so the reported loss is dominated by padding for short sequences")
        yield ctx.finding(
            CODE, call,
            f"`{ctx.snippet(call)}`: the targets `{ctx.snippet(target)}` {evidence} but {loss} ignores only {ignore}: {effect}.",
            f"Pad the targets with {ignore} (padding_value={ignore}), or pass ignore_index={value} to {loss}.",
        )


def _padding_mask(ctx: FileContext, target: ast.expr, scope: ast.AST, line: int, ignore: int,
                  source: ast.Call) -> tuple[str, ast.AST] | None:
    """(the padding value as written, the comparison) when the function holding the loss masks the padding of the
    very targets it hands the loss: ``non_pad_mask = gold.ne(trg_pad_idx)`` beside ``F.cross_entropy(pred, gold)``.

    The code itself says the targets hold padding: the value compared is named as padding (``pad_idx``,
    ``PAD``), or the mask is (``pad_mask = y == 0``). Silent when the targets are changed in place (``y[y == pad] =
    -100`` replaces the padding), when the value may be the ignored one, and for names that by convention hold -100
    (``label_pad_token_id``, ``IGNORE_INDEX``)."""
    node = target
    while isinstance(node, ast.Call) and method_name(node) in _KEEP and not ctx.call_name(node):
        node = node.func.value  # type: ignore[attr-defined]
    if not isinstance(node, ast.Name):
        return None
    candidates = [(compare, pair, written) for name, compare, pair, written in _padding_compares(ctx, scope) if name == node.id]
    if not candidates or _changed_in_place(ctx, scope, node.id):
        return None
    defs = {id(v) for v in reaching(ctx, scope, node.id, line)}
    for compare, pair, written in candidates:
        if {id(v) for v in reaching(ctx, scope, node.id, compare.lineno)} != defs:  # type: ignore[attr-defined]
            continue
        known = values(ctx, pair)
        if known is not None:
            if len(known) == 1 and isinstance(value := next(iter(known)), int) and not isinstance(value, bool) and value != ignore:
                return str(value), compare
            continue
        if kwarg(source, "ignore_index") is None:  # the default -100: a padding index of a vocabulary is not negative
            return written, compare
    return None


def _padding_compares(ctx: FileContext, scope: ast.AST) -> list[tuple[str, ast.AST, ast.expr, str]]:
    """(name, comparison, value, value as written) for each (in)equality test in ``scope`` of a name with a value
    that is named as padding, or whose result is (``gold.ne(trg_pad_idx)``, ``pad_mask = y == 0``); once per scope."""
    cache = ctx.__dict__.setdefault("_tw305_compares", {})
    found = cache.get(id(scope))
    if found is None:
        found = cache[id(scope)] = []
        for node in ctx.members(scope):
            for name, value in _compared(ctx, node):
                written = ctx.snippet(value)
                parent = ctx.parents.get(id(node))
                mask = key_of(parent.targets[0]) if isinstance(parent, ast.Assign) and len(parent.targets) == 1 else None
                if ("pad" in written.lower() or "pad" in (mask or "").lower()) \
                        and not any(word in written.lower() for word in ("label", "ignore", "-100")):
                    found.append((name, node, value, written))
    return found


def _compared(ctx: FileContext, node: ast.AST) -> list[tuple[str, ast.expr]]:
    """(name, what it is compared with) for an (in)equality test ``node``, either way round: ``name.ne(v)``,
    ``name != v``, ``torch.eq(name, v)`` (through reshapes of ``name``)."""
    def base(expr: ast.expr) -> str | None:
        while isinstance(expr, ast.Call) and method_name(expr) in _KEEP and not ctx.call_name(expr):
            expr = expr.func.value  # type: ignore[attr-defined]
        return expr.id if isinstance(expr, ast.Name) else None

    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        left, right = node.left, node.comparators[0]
    elif isinstance(node, ast.Call) and method_name(node) in ("ne", "eq") and len(node.args) == 1 and not ctx.call_name(node):
        left, right = node.func.value, node.args[0]  # type: ignore[attr-defined]
    elif isinstance(node, ast.Call) and ctx.call_name(node) in ("torch.ne", "torch.eq") and len(node.args) == 2:
        left, right = node.args
    else:
        return []
    found = []
    for one, other in ((left, right), (right, left)):
        name = base(one)
        if name is not None and isinstance(other, (ast.Name, ast.Attribute, ast.Constant, ast.UnaryOp)) and base(other) != name:
            found.append((name, other))
    return found


def _changed_in_place(ctx: FileContext, scope: ast.AST, name: str) -> bool:
    """Whether ``scope`` writes into ``name`` (``y[mask] = -100``, ``y.masked_fill_(...)``)."""
    for node in ctx.members(scope):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) \
                and node.value.id == name:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") \
                and not node.func.attr.startswith("_") and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            return True
    return False


def _backpropagates(ctx: FileContext, scope: ast.AST) -> bool:
    """Whether the function holding the loss (or the module), or a function of the file that calls it (a few levels
    up), calls ``backward()``: the loss trains, not only reports (``loss = compute_loss(...)``, ``loss.backward()``)."""
    def calls_backward(where: ast.AST) -> bool:
        return any(isinstance(n, ast.Call) and method_name(n) in ("backward", "manual_backward") for n in ctx.members(where))

    seen: set[int] = set()
    todo = [scope]
    while todo and len(seen) < 8:  # the callers of the callers, a few levels up
        where = todo.pop()
        if id(where) in seen:
            continue
        seen.add(id(where))
        if calls_backward(where):
            return True
        name = getattr(where, "name", None)
        todo += [ctx.scope_of(c) for c in ctx.calls if name is not None and key_of(c.func) == name]
    return False


def _branch_losses(ctx: FileContext) -> Iterator[tuple[ast.Call, str, ast.AST, ast.Call]]:
    """(call, loss class, scope, constructor) for the calls of a key that ``if`` statements build as different losses
    (``criterion = CTCLoss()`` if ``'CTC' in opt.Prediction`` else ``CrossEntropyLoss(ignore_index=0)``), where only
    the cross-entropy or NLL constructor can reach the call: it sits in the other branch of the same test."""
    built: dict[str, list[ast.Assign]] = {}
    for node in ctx.assigns:
        role = ctx.classify(node.value) if len(node.targets) == 1 else None
        if role is not None and role.kind == "loss" and (key := key_of(node.targets[0])) is not None:
            built.setdefault(key, []).append(node)
    for key, assigns in built.items():
        if len({ctx.classify(a.value).cls for a in assigns}) < 2:  # type: ignore[union-attr]
            continue  # one class: the role already says which
        for call in (c for c in ctx.calls if key_of(c.func) == key and len(c.args) > 1):
            scope = ctx.scope_of(call)
            reach = [a for a in assigns if _compatible(ctx, a, call, scope)]
            classes = {ctx.classify(a.value).cls for a in reach}  # type: ignore[union-attr]
            if len(classes) == 1 and classes <= {"CrossEntropyLoss", "NLLLoss"} and len({ast.dump(a.value) for a in reach}) == 1:
                yield call, classes.pop(), scope, strip_identity(reach[0].value)  # type: ignore[misc]


def _loss_options(ctx: FileContext, call: ast.Call, source: ast.Call | None = None) -> tuple[int, str | None] | None:
    """(ignore_index, reduction) of a loss call (built by ``source``, where given); None when either is not a literal."""
    role = ctx.role(key_of(call.func))
    if source is None:
        source = role.node if role is not None and role.kind == "loss" and isinstance(role.node, ast.Call) else call
    if any(k.arg is None for k in source.keywords):
        return None
    ignore = kwarg(source, "ignore_index")
    reduction = kwarg(source, "reduction")
    if ignore is None:
        ignore_value = _DEFAULT_IGNORE
    else:
        value = _constant_int(ctx, ignore)
        if value is None:
            return None
        ignore_value = value
    if reduction is not None and not (isinstance(reduction, ast.Constant) and isinstance(reduction.value, str)):
        return None
    return ignore_value, reduction.value if reduction is not None else None  # type: ignore[union-attr]


def _constant_int(ctx: FileContext, node: ast.AST | None, scope: ast.AST | None = None) -> int | None:
    """A literal, a name assigned one literal (``PAD_IDX = 0``), or the entry of a dict literal assigned once
    (``special_symbols["<pad>"]`` after ``special_symbols = {"<unk>": 0, "<pad>": 1}``). A name is looked up in
    ``scope`` and the functions around it (a collate_fn defined inside the function that builds the loader), else
    in the whole file, where it must be assigned once."""
    value = _literal_int(node)
    if value is None and isinstance(node, ast.Name):
        value = _literal_int(_named(ctx, node, scope))
    if value is None and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
            and isinstance(node.slice, ast.Constant) and isinstance(table := _named(ctx, node.value, scope), ast.Dict):
        entries = [v for k, v in zip(table.keys, table.values) if isinstance(k, ast.Constant) and k.value == node.slice.value]
        value = _literal_int(entries[0]) if len(entries) == 1 and None not in table.keys else None
    return value


def _named(ctx: FileContext, name: ast.Name, scope: ast.AST | None) -> ast.AST | None:
    """The one value ``name`` is assigned in the innermost of ``scope`` and its enclosing functions that assigns it."""
    while scope is not None and not isinstance(scope, ast.Module):
        found = definitions(ctx, scope).get(name.id)
        if found:
            return found[0][1] if len(found) == 1 else None
        scope = next((f for f in [*ctx.functions.values(), *ctx.nested_functions.values()]
                      if any(n is scope for n in ctx.members(f))), None)
    return single_value(ctx, name)


def _literal_int(node: ast.AST | None) -> int | None:
    """``-100``, ``0`` or ``0.0`` (a whole float pads integer targets with that integer)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal_int(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and type(node.value) in (int, float) and float(node.value).is_integer():
        return int(node.value)
    return None


def _pad_value(ctx: FileContext, node: ast.AST | None, scope: ast.AST, line: int, depth: int) -> tuple[int, ast.Call] | None:
    """(padding value, the padding call) when ``node`` holds a tensor padded with a literal value."""
    if node is None or depth > 10:
        return None
    if isinstance(node, ast.Name):
        values = reaching(ctx, scope, node.id, line)
        if len(values) != 1:
            return None
        value = values[0]
        if isinstance(value, (ast.For, ast.AsyncFor)):
            return _from_loader(ctx, value, node.id, None, depth)
        if isinstance(value, ast.AugAssign):
            return None
        if isinstance(value, Element):
            return _returned(ctx, value, scope, node, depth)
        filled = _filled(ctx, value)
        if filled is not None and _rows_written(ctx, scope, node.id):
            return filled, value  # type: ignore[return-value]
        return _pad_value(ctx, value, scope, getattr(value, "lineno", line), depth + 1)
    if isinstance(node, ast.Subscript):
        key = node.slice.value if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) else None
        if key is not None and isinstance(node.value, ast.Name):  # batch["labels"]
            values = reaching(ctx, scope, node.value.id, line)
            if len(values) == 1 and isinstance(values[0], (ast.For, ast.AsyncFor)):
                return _from_loader(ctx, values[0], node.value.id, key, depth)
            return None
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(not isinstance(i, ast.Slice) and not (isinstance(i, ast.Constant) and i.value is Ellipsis) for i in items):
            return None  # one position (`targets[:, 0]`): padding there depends on lengths we do not know
        return _pad_value(ctx, node.value, scope, line, depth + 1)
    if not isinstance(node, ast.Call):
        return None
    qual = ctx.call_name(node) or ""
    last = qual.rsplit(".", 1)[-1]
    if qual.startswith("torch") and last == "pad_sequence":
        if any(k.arg is None for k in node.keywords):
            return None
        given = argument(node, "padding_value", ("sequences", "batch_first", "padding_value"))
        value = 0 if given is None else _constant_int(ctx, given, scope)
        return (value, node) if value is not None else None
    if qual.startswith("torch") and last == "pad" and "functional" in qual:
        given = argument(node, "value", ("input", "pad", "mode", "value"))
        value = 0 if given is None else _constant_int(ctx, given, scope)
        return (value, node) if value is not None else None
    name = method_name(node)
    if name in _KEEP and not qual:
        return _pad_value(ctx, node.func.value, scope, line, depth + 1)  # type: ignore[attr-defined]
    return None


def _filled(ctx: FileContext, value: ast.AST) -> int | None:
    """The value a new tensor is filled with: ``torch.LongTensor(n, width).fill_(0)``, ``torch.full((n, width), pad)``,
    ``torch.zeros(n, width).long()`` (0), ``torch.ones(...)`` (1); None for anything else."""
    while isinstance(value, ast.Call) and method_name(value) in ("long", "int", "to", "cuda"):
        value = value.func.value  # type: ignore[attr-defined]
    if not isinstance(value, ast.Call):
        return None
    if method_name(value) == "fill_" and len(value.args) == 1 and isinstance(value.func.value, ast.Call):  # type: ignore[attr-defined]
        made = ctx.call_name(value.func.value) or ""  # type: ignore[attr-defined]
        return _constant_int(ctx, value.args[0]) if made.startswith("torch.") and made.rsplit(".", 1)[-1] in _NEW_TENSORS else None
    qual = ctx.call_name(value) or ""
    if qual == "torch.full" and len(value.args) >= 2:
        return _constant_int(ctx, value.args[1])
    return {"torch.zeros": 0, "torch.ones": 1}.get(qual)


_NEW_TENSORS = {"LongTensor", "IntTensor", "Tensor", "zeros", "empty", "ones"}


def _rows_written(ctx: FileContext, scope: ast.AST, name: str) -> bool:
    """Whether ``scope`` writes sequences into the rows of ``name`` in a loop, leaving the rest of each row as it was
    filled: ``batch[i, :len(seq)] = seq``, ``batch[i][1:1 + len(t)] = t`` (padding by hand)."""
    for loop in (n for n in ctx.members(scope) if isinstance(n, (ast.For, ast.While))):
        for node in walk(loop):
            for target in node.targets if isinstance(node, ast.Assign) else []:
                slices = []
                while isinstance(target, ast.Subscript):
                    slices += target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
                    target = target.value
                if isinstance(target, ast.Name) and target.id == name and any(isinstance(x, ast.Slice) for x in slices):
                    return True
    return False


def _returned(ctx: FileContext, element: Element, scope: ast.AST, use: ast.AST, depth: int) -> tuple[int, ast.Call] | None:
    """The padding of item ``element.index`` of what a call returns: a function of the file or of the project, or the
    method of the object it is called on (``text, length = converter.encode(labels)``, for each class the converter may
    be on the path that reaches ``use``); one value on every path, or None."""
    call = element.value
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    targets: list[tuple[FileContext, ast.AST]] = []
    if isinstance(func, ast.Attribute) and key_of(func.value) not in (None, "self"):
        targets = instance_methods(ctx, func.value, func.attr, keep=lambda a: _compatible(ctx, a, use, scope))
    elif isinstance(func, ast.Name) and (func.id in ctx.functions or func.id in ctx.nested_functions):
        targets = [(ctx, ctx.functions.get(func.id) or ctx.nested_functions[func.id])]
    elif ctx.project is not None and (found := ctx.project.function(ctx, func)) is not None:
        targets = [found]
    values = set()
    first = None
    for home, fn in targets:
        for ret in (n for n in home.members(fn) if isinstance(n, ast.Return)):
            item = ret.value.elts[element.index] if isinstance(ret.value, ast.Tuple) and len(ret.value.elts) > element.index else None
            found = _pad_value(home, item, fn, ret.lineno, depth + 1) if item is not None else None
            if found is None:
                return None
            values.add(found[0])
            first = first or found
    return first if len(values) == 1 else None


def _compatible(ctx: FileContext, assign: ast.AST, use: ast.AST, scope: ast.AST) -> bool:
    """Whether the assignment can reach ``use``: not when both sit under ``if`` statements of ``scope`` with the same
    test, one in the body and the other in the ``else``, and nothing in ``scope`` assigns what that test reads."""
    mine, theirs = _guards(ctx, assign), _guards(ctx, use)
    cache = ctx.__dict__.setdefault("_tw305_assigned", {})
    assigned = cache.get(id(scope))
    if assigned is None:
        assigned = cache[id(scope)] = {key_of(t) for n in ctx.members(scope) if isinstance(n, (ast.Assign, ast.AugAssign))
                                       for t in (n.targets if isinstance(n, ast.Assign) else [n.target])}
    for test, branch in mine:
        if (test, not branch) in theirs:
            node = next(n for n in ctx.members(scope) if isinstance(n, ast.If) and ast.dump(n.test) == test)
            if not any(key_of(n) in assigned for n in walk(node.test) if isinstance(n, (ast.Name, ast.Attribute))):
                return False
    return True


def _guards(ctx: FileContext, node: ast.AST) -> set[tuple[str, bool]]:
    """(the test, True for its body) of every ``if`` statement around ``node``."""
    parents = ctx.parents
    found, child, parent = set(), node, parents.get(id(node))
    while parent is not None:
        if isinstance(parent, ast.If) and child is not parent.test:
            found.add((ast.dump(parent.test), any(child is s for s in parent.body)))
        child, parent = parent, parents.get(id(parent))
    return found


def _getitem(ctx: FileContext, dataset: ast.expr | None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """``__getitem__`` of the local Dataset class a loader reads (its samples are stacked as they come)."""
    built = value_of(ctx, dataset)
    name = key_of(built.func) if isinstance(built, ast.Call) else None
    return ctx.methods.get(name or "", {}).get("__getitem__") if name in ctx.classes else None


def _assigns_binding(ctx: FileContext) -> dict[str | None, list[ast.Assign]]:
    """key -> the assignments of the file that bind it, whole or as an element of a tuple target, in file order
    (indexed once per file: asked per loop)."""
    index = ctx.__dict__.get("_tw305_binding")
    if index is None:
        index = ctx.__dict__["_tw305_binding"] = {}
        for assign in ctx.assigns:
            keys = {key_of(t) for target in assign.targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])}
            for key in keys:
                index.setdefault(key, []).append(assign)
    return index


def _loader(ctx: FileContext, iterable: ast.expr) -> tuple[FileContext, ast.Call] | None:
    """The ``DataLoader(...)`` call a loop reads, with the file that builds it: one of this file (through single
    assignments and a local helper's ``return``), or one that a function of the file or of the project returns in a
    tuple (``train_dl, valid_dl, vocab = get_data(opts)``, where ``get_data`` builds ``train_dl = DataLoader(...)``)."""
    loader = value_of(ctx, iterable)
    if isinstance(loader, ast.Call) and qual_last(ctx, loader) == "DataLoader":
        return ctx, loader
    key = key_of(iterable)
    unpacks = _assigns_binding(ctx).get(key, []) if key is not None else []
    if len(unpacks) != 1 or len(unpacks[0].targets) != 1 or not isinstance(unpacks[0].targets[0], ast.Tuple) \
            or not isinstance(unpacks[0].value, ast.Call):
        return None
    names = [key_of(e) for e in unpacks[0].targets[0].elts]
    index, func = names.index(key), unpacks[0].value.func
    fn = ctx.functions.get(key_of(func) or "")
    found = (ctx, fn) if fn is not None else ctx.project.function(ctx, func) if ctx.project is not None else None
    if found is None:
        return None
    home, fn = found
    if fn is None:
        return None
    made: list[ast.expr] = []
    for ret in (n.value for n in home.members(fn) if isinstance(n, ast.Return)):
        if not isinstance(ret, ast.Tuple) or len(ret.elts) != len(names):
            return None
        item = ret.elts[index]
        values = reaching(home, fn, item.id, ret.lineno) if isinstance(item, ast.Name) else [item]  # type: ignore[union-attr]
        if len(values) != 1 or not isinstance(values[0], ast.Call):
            return None
        made.append(values[0])  # type: ignore[arg-type]
    if len(made) != 1 or qual_last(home, made[0]) != "DataLoader":
        return None
    return home, made[0]  # type: ignore[return-value]


def _from_loader(ctx: FileContext, loop: ast.For | ast.AsyncFor, name: str, key: str | None, depth: int) -> tuple[int, ast.Call] | None:
    """What a loop variable holds when the loop reads a DataLoader whose collate_fn is a local function (or
    whose local Dataset pads in ``__getitem__``)."""
    iterable, target = loop.iter, loop.target
    if isinstance(iterable, ast.Call) and key_of(iterable.func) == "enumerate" and iterable.args:
        iterable = iterable.args[0]
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None  # type: ignore[assignment]
    if isinstance(iterable, ast.Call) and key_of(iterable.func) in ("tqdm", "tqdm.tqdm") and iterable.args:
        iterable = iterable.args[0]
    found = _loader(ctx, iterable)
    if found is None:
        return None
    ctx, loader = found  # the file that builds the loader: its collate_fn and padding value are read there
    collate = loader_argument(loader, "collate_fn")
    if isinstance(collate, ast.Lambda):  # collate_fn=lambda batch: (pad_sequence(...), pad_sequence(...))
        fn, result = ctx.tree, collate.body
    else:
        if collate is None:  # the default collate stacks what the dataset's __getitem__ padded
            fn = _getitem(ctx, loader_argument(loader, "dataset"))
        else:  # a function of the file, or one defined inside the function that builds the loader
            fn = ctx.functions.get(key_of(collate) or "") or ctx.nested_functions.get(key_of(collate) or "")  # type: ignore[assignment]
        if fn is None:
            return None
        returns = [n.value for n in walk(fn) if isinstance(n, ast.Return) and n.value is not None]
        if len(returns) != 1:
            return None
        result = returns[0]
    if key is None and isinstance(target, ast.Tuple) and isinstance(result, ast.Tuple) and len(result.elts) == len(target.elts):
        names = [key_of(e) for e in target.elts]
        part = result.elts[names.index(name)] if name in names else None
    elif key is not None and isinstance(target, ast.Name) and target.id == name and isinstance(result, ast.Dict):
        part = next((v for k, v in zip(result.keys, result.values) if isinstance(k, ast.Constant) and k.value == key), None)
    else:
        part = None
    return _pad_value(ctx, part, fn, getattr(result, "lineno", 10**9), depth + 1) if part is not None else None
