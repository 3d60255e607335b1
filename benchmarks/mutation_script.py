"""One training script under mutation: its tree, the edits a mutation makes, and the facts its premises read.

Edits work on the original text with `ast` positions (whole-line deletes and
moves, segment replacements), so the rest of the file stays byte for byte as
it was. The facts are deliberately plain (names, constructors, the project's
class definitions): a premise that cannot be established drops the mutant.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterator

OPTIMIZERS = {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS"}
STATEFUL_OPTIMIZERS = OPTIMIZERS - {"SGD", "LBFGS", "Rprop"}  # SGD counts when built with momentum
SCHEDULERS = {"StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "ReduceLROnPlateau", "OneCycleLR", "CyclicLR",
              "LambdaLR", "LinearLR", "CosineAnnealingWarmRestarts", "PolynomialLR", "MultiplicativeLR", "SequentialLR"}
TORCHVISION_MODELS = re.compile(r"^(resnet|resnext|wide_resnet|vgg|densenet|mobilenet|efficientnet|alexnet|inception|googlenet|"
                                r"squeezenet|shufflenet|regnet|convnext|vit_|swin_|mnasnet|maxvit)")
MODE_LAYERS = re.compile(r"Dropout|BatchNorm|\bdropout\(|SyncBatchNorm|InstanceNorm\dd\(.*track_running_stats=True")
NO_GRAD = {"no_grad", "inference_mode"}


@dataclass(frozen=True)
class Mutant:
    """A copy of the script with one mistake made, and where it was made (1-based line of the original)."""

    code: str
    operator: str
    line: int
    source: str


def callee(call: ast.Call) -> str:
    """The last name of what is called: ``optimizer.zero_grad()`` -> ``zero_grad``."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def receiver(call: ast.Call) -> str:
    """The source of what a method is called on: ``self.opt.step()`` -> ``self.opt`` ('' for a plain call)."""
    return ast.unparse(call.func.value) if isinstance(call.func, ast.Attribute) else ""


def base_call(value: ast.AST) -> ast.Call | None:
    """The constructor under ``.to(device)``, ``.cuda()`` and wrappers: ``DDP(Net().cuda())`` -> ``Net()``."""
    while isinstance(value, ast.Call):
        if isinstance(value.func, ast.Attribute) and value.func.attr in {"to", "cuda", "float", "double", "half", "train"}:
            value = value.func.value
        elif callee(value) in {"DataParallel", "DistributedDataParallel", "DDP"} and value.args:
            value = value.args[0]
        else:
            return value
    return None


class Script:
    """A parsed training script, with the project's classes (name -> source) for premises about its models."""

    def __init__(self, source: str, classes: dict[str, str] | None = None) -> None:
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.unterminated = bool(self.lines) and not self.lines[-1].endswith("\n")  # kept so: a mutant differs only where mutated
        if self.unterminated:
            self.lines[-1] += "\n"
        self.tree = ast.parse(source)
        own = {n.name: ast.get_source_segment(source, n) or "" for n in ast.walk(self.tree) if isinstance(n, ast.ClassDef)}
        self.classes = {**(classes or {}), **own}  # the script's own classes win over the project's same-named ones
        self.parent: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
        self.calls = [n for n in ast.walk(self.tree) if isinstance(n, ast.Call)]
        self.functions = {n.name: n for n in ast.walk(self.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

    # -- structure -----------------------------------------------------------------
    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        while node in self.parent:
            node = self.parent[node]
            yield node

    def statement(self, node: ast.AST) -> ast.stmt:
        while not isinstance(node, ast.stmt):
            node = self.parent[node]
        return node

    def function_of(self, node: ast.AST) -> ast.AST:
        """The function holding ``node`` (the module at top level)."""
        return next((a for a in self.ancestors(node) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))), self.tree)

    def loops_of(self, node: ast.AST) -> list[ast.For | ast.While]:
        """The loops around ``node`` inside its function, innermost first."""
        loops = []
        for above in self.ancestors(node):
            if isinstance(above, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                break
            if isinstance(above, (ast.For, ast.While, ast.AsyncFor)):
                loops.append(above)
        return loops

    def block_of(self, stmt: ast.stmt) -> list[ast.stmt]:
        parent = self.parent[stmt]
        for name in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and stmt in block:
                return block
        return []

    def expression_statements(self, name: str) -> Iterator[tuple[ast.Expr, ast.Call]]:
        """Statements that are just a call of method or function ``name``, alone on their lines."""
        for call in self.calls:
            if callee(call) == name:
                stmt = self.parent.get(call)
                if isinstance(stmt, ast.Expr) and self.alone(stmt):
                    yield stmt, call

    def alone(self, stmt: ast.stmt) -> bool:
        """Whether ``stmt`` owns its lines (no ``a; b``), so a whole-line edit touches nothing else."""
        first, last = self._bytes(stmt.lineno), self._bytes(stmt.end_lineno or stmt.lineno)
        tail = last[stmt.end_col_offset:].decode(errors="replace").strip()
        return not first[: stmt.col_offset].strip() and (not tail or tail.startswith("#"))

    def indent(self, stmt: ast.stmt) -> str:
        line = self.lines[stmt.lineno - 1]
        return line[: len(line) - len(line.lstrip())]

    def reaches(self, node: ast.AST, want: str, depth: int = 3) -> bool:
        """Whether ``node`` calls ``want`` (a callee name), directly or through functions of this file."""
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call):
                if callee(inner) == want:
                    return True
                helper = self.functions.get(callee(inner))
                if depth and helper is not None and helper is not node and self.reaches(helper, want, depth - 1):
                    return True
        return False

    def called_in_loop(self, function: ast.AST) -> bool:
        """Whether a function of this file is called from inside a loop (an epoch loop driving it)."""
        name = getattr(function, "name", None)
        return any(callee(c) == name and (self.loops_of(c) or self.called_in_loop(self.function_of(c)))
                   for c in self.calls if self.function_of(c) is not function) if name else False

    def in_no_grad(self, node: ast.AST) -> bool:
        for above in self.ancestors(node):
            if isinstance(above, ast.With) and any(_is_grad_off(item.context_expr) for item in above.items):
                return True
            if isinstance(above, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(_is_grad_off(d) for d in above.decorator_list):
                return True
        return False

    # -- facts about names ------------------------------------------------------------
    def constructors(self, name: str, within: ast.AST | None = None, depth: int = 3) -> list[ast.Call]:
        """What ``name`` (source text of a target) is assigned from, under `.to()` and wrappers. ``within``: the
        function where ``name`` is read; when it is a parameter there (never assigned in it), what the function's
        callers in this file pass for it (a same-named variable elsewhere is another object)."""
        passed = self._passed(name, within) if within is not None and depth else None
        if passed is not None:
            return [c for arg in passed for c in self.constructors(ast.unparse(arg), self.function_of(arg), depth - 1)]
        found = []
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(ast.unparse(t) == name for t in targets):
                    call = base_call(node.value)
                    if call is not None:
                        found.append(call)
        return found

    def _passed(self, name: str, function: ast.AST) -> list[ast.expr] | None:
        """The arguments this file's calls of ``function`` pass for its parameter ``name`` (None: not a parameter that
        keeps the caller's object, or no call seen)."""
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        params = [a.arg for a in function.args.posonlyargs + function.args.args]
        if name not in params or any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(function)):
            return None
        index = params.index(name)
        found = []
        for call in self.calls:
            if isinstance(call.func, ast.Name) and call.func.id == function.name:
                if index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
                    found.append(call.args[index])
                else:
                    found += [k.value for k in call.keywords if k.arg == name]
        return found or None

    def runs_remotely(self, call: ast.Call) -> bool:
        """A module class whose forward calls into another process over RPC (a parameter server's trainer-side stub):
        its own mode and autograd state do not reach the layers that run there."""
        return bool(_RPC.search(self.classes.get(callee(call), "")))

    def built_with(self, name: str, kinds: set[str]) -> ast.Call | None:
        return next((c for c in self.constructors(name) if callee(c) in kinds), None)

    def only_built_with(self, name: str, kinds: set[str]) -> bool:
        """Every assignment of ``name`` builds one of ``kinds`` (``criterion = CTCLoss() if ... else CrossEntropyLoss()`` does not)."""
        made = [n.value for n in ast.walk(self.tree) if isinstance(n, ast.Assign) and any(ast.unparse(t) == name for t in n.targets)]
        return bool(made) and all(base_call(v) is not None and callee(base_call(v)) in kinds for v in made)

    def has_mode_layers(self, model: str, within: ast.AST | None = None) -> bool | None:
        """Whether the model named ``model`` has Dropout or BatchNorm (None: its class is not known here)."""
        answers = [False if self.runs_remotely(c) else self._class_has_mode_layers(c) for c in self.constructors(model, within)]
        known = [a for a in answers if a is not None]
        return (all(known) if known else None) if len(known) == len(answers) else None

    def _class_has_mode_layers(self, call: ast.Call, depth: int = 4) -> bool | None:
        name = callee(call)
        if isinstance(call.func, ast.Subscript) and "models" in ast.unparse(call.func):
            return True  # torchvision's models.__dict__[arch]: every classification model has BatchNorm or Dropout
        if name == "Sequential":
            return bool(MODE_LAYERS.search(ast.unparse(call)))
        if TORCHVISION_MODELS.match(name) and name not in self.classes:
            return True
        return self._text_has_mode_layers(name, depth)

    def _text_has_mode_layers(self, name: str, depth: int, seen: frozenset[str] = frozenset()) -> bool | None:
        """From the class's own source and the project classes it builds; None where it builds something unknown."""
        text = self.classes.get(name)
        if text is None:
            return None
        if MODE_LAYERS.search(text):
            return True
        seen = seen | {name}
        called = re.findall(r"(?<![\w.])((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\s*\(", text)
        if any(TORCHVISION_MODELS.match(c.split(".")[-1]) and c.split(".")[-1] not in self.classes for c in called):
            return True
        used = {c.split(".")[-1] for c in called} & set(self.classes) - seen
        answers = [self._text_has_mode_layers(u, depth - 1, seen) if depth else None for u in used]
        if any(answers):
            return True
        unknown = [c for c in called if c.split(".")[-1][:1].isupper() and not c.startswith(("nn.", "torch.nn."))
                   and c.split(".")[-1] not in self.classes and c.split(".")[-1] not in _PLAIN_CLASSES]
        return None if None in answers or unknown else False

    def is_model(self, name: str, within: ast.AST | None = None) -> bool:
        """``name`` is built from a module class this project or torchvision defines."""
        return any(self._class_has_mode_layers(c) is not None for c in self.constructors(name, within))

    def computes_locally(self, name: str, within: ast.AST | None = None) -> bool:
        """``name`` is a model whose forward runs here (not over RPC in another process)."""
        made = self.constructors(name, within)
        return any(self._class_has_mode_layers(c) is not None for c in made) and not any(self.runs_remotely(c) for c in made)

    def optimizer_names(self) -> set[str]:
        return {ast.unparse(t) for n in ast.walk(self.tree) if isinstance(n, ast.Assign) and base_call(n.value) is not None
                and callee(base_call(n.value)) in OPTIMIZERS for t in n.targets}

    def scheduler_names(self) -> set[str]:
        return {ast.unparse(t) for n in ast.walk(self.tree) if isinstance(n, ast.Assign) and base_call(n.value) is not None
                and (callee(base_call(n.value)) in SCHEDULERS or "lr_scheduler" in ast.unparse(n.value)) for t in n.targets}

    def is_optimizer_step(self, call: ast.Call) -> bool:
        if callee(call) != "step":
            return False
        who = receiver(call)
        if who in self.scheduler_names() or "sched" in who.lower():
            return False
        return who in self.optimizer_names() or "optim" in who.lower() or who in {"opt", "scaler"} or who.endswith("scaler")

    def contains(self, node: ast.AST, name: str) -> bool:
        return any(isinstance(c, ast.Call) and callee(c) == name for c in ast.walk(node))

    def contains_step(self, node: ast.AST) -> bool:
        return any(isinstance(c, ast.Call) and self.is_optimizer_step(c) for c in ast.walk(node))

    def int_value(self, node: ast.AST) -> int | None:
        """An int the code spells or names: a literal, a module constant, an argparse default (``args.batch_size``)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            flag = node.attr
            for call in self.calls:
                if callee(call) == "add_argument" and call.args and isinstance(call.args[-1], ast.Constant):
                    dest = next((k.value.value for k in call.keywords if k.arg == "dest" and isinstance(k.value, ast.Constant)), None)
                    names = {str(a.value).lstrip("-").replace("-", "_") for a in call.args if isinstance(a, ast.Constant)}
                    if flag == dest or flag in names:
                        default = next((k.value for k in call.keywords if k.arg == "default"), None)
                        return default.value if isinstance(default, ast.Constant) and isinstance(default.value, int) else None
        if isinstance(node, ast.Name):
            values = [n.value for n in self.tree.body if isinstance(n, ast.Assign) and any(ast.unparse(t) == node.id for t in n.targets)]
            if len(values) == 1 and isinstance(values[0], ast.Constant) and isinstance(values[0].value, int):
                return values[0].value
        return None

    # -- edits -----------------------------------------------------------------------
    def mutant(self, code: str, operator: str, at: ast.AST, edits: list[tuple[int, int, list[str]]]) -> Mutant | None:
        """Apply whole-line edits (0-based [start, end) line ranges of the original, replaced by lines); None if it no longer parses."""
        lines = list(self.lines)
        for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
            lines[start:end] = new
        source = "".join(lines)
        if self.unterminated and source.endswith("\n"):
            source = source[:-1]
        try:
            ast.parse(source)
        except SyntaxError:
            return None
        return Mutant(code, operator, at.lineno, source) if source != self.source else None

    def delete(self, stmt: ast.stmt) -> list[tuple[int, int, list[str]]]:
        """Remove ``stmt``'s lines (a ``pass`` keeps a block that would be empty)."""
        alone = len(self.block_of(stmt)) == 1
        return [(stmt.lineno - 1, stmt.end_lineno or stmt.lineno, [self.indent(stmt) + "pass\n"] if alone else [])]

    def text_at(self, stmt: ast.stmt, indent: str) -> list[str]:
        """``stmt``'s lines re-indented to ``indent``."""
        old = self.indent(stmt)
        return [indent + line[len(old):] if line.startswith(old) else line for line in self.lines[stmt.lineno - 1:stmt.end_lineno]]

    def move(self, stmt: ast.stmt, anchor: ast.stmt, before: bool) -> list[tuple[int, int, list[str]]]:
        """Move ``stmt`` just before or after ``anchor`` (at the anchor's indentation)."""
        where = anchor.lineno - 1 if before else anchor.end_lineno or anchor.lineno
        return self.delete(stmt) + [(where, where, self.text_at(stmt, self.indent(anchor)))]

    def insert_after(self, anchor: ast.stmt, text: str) -> list[tuple[int, int, list[str]]]:
        where = anchor.end_lineno or anchor.lineno
        return [(where, where, [self.indent(anchor) + text + "\n"])]

    def replace(self, node: ast.AST, text: str) -> list[tuple[int, int, list[str]]]:
        """Replace the source of expression ``node`` by ``text``."""
        return self.splice((node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset), text)

    def drop_keyword(self, call: ast.Call, name: str) -> list[tuple[int, int, list[str]]]:
        """``call`` without its keyword argument ``name`` (and the comma before it); the rest as written."""
        arguments = sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))
        keyword = next(k for k in call.keywords if k.arg == name)
        at = arguments.index(keyword)
        if at:
            before = arguments[at - 1]
            return self.splice((before.end_lineno, before.end_col_offset), (keyword.end_lineno, keyword.end_col_offset), "")
        if len(arguments) > 1:
            after = arguments[1]
            return self.splice((keyword.lineno, keyword.col_offset), (after.lineno, after.col_offset), "")
        return self.splice((keyword.lineno, keyword.col_offset), (keyword.end_lineno, keyword.end_col_offset), "")

    def add_keyword(self, call: ast.Call, text: str) -> list[tuple[int, int, list[str]]]:
        """``call`` with ``text`` (``name=value``) after its last argument."""
        arguments = sorted([*call.args, *call.keywords], key=lambda a: (a.end_lineno, a.end_col_offset))
        if not arguments:
            return self.splice((call.end_lineno, call.end_col_offset - 1), (call.end_lineno, call.end_col_offset - 1), text)
        last = arguments[-1]
        return self.splice((last.end_lineno, last.end_col_offset), (last.end_lineno, last.end_col_offset), f", {text}")

    def splice(self, start: tuple[int, int], end: tuple[int, int], text: str) -> list[tuple[int, int, list[str]]]:
        """Replace the source between two (1-based line, byte column) positions."""
        head = self._bytes(start[0])[: start[1]].decode(errors="replace")
        tail = self._bytes(end[0])[end[1]:].decode(errors="replace")
        return [(start[0] - 1, end[0], [head + text + tail])]

    def _bytes(self, lineno: int) -> bytes:
        return self.lines[lineno - 1].encode()


_RPC = re.compile(r"\brpc\.|\brpc_sync\(|\brpc_async\(|\bremote_method\(")
_PLAIN_CLASSES = {"ValueError", "TypeError", "NotImplementedError", "RuntimeError", "AssertionError", "Variable", "Parameter",
                  "ModuleList", "ModuleDict", "Sequential", "Linear", "Conv2d", "Conv1d", "ReLU", "Embedding", "LSTM", "GRU", "Tensor"}


def _is_grad_off(expr: ast.AST) -> bool:
    if isinstance(expr, ast.Call):
        name = callee(expr)
        if name in NO_GRAD:
            return True
        if name == "set_grad_enabled" and expr.args and isinstance(expr.args[0], ast.Constant) and expr.args[0].value is False:
            return True
    return isinstance(expr, ast.Attribute) and expr.attr in NO_GRAD
