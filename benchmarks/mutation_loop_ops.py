"""Mutation operators for the optimizer's lifecycle, resume and many processes, modes and the autograd graph (TW1xx, TW2xx).

Each makes, in a working training script, the one mistake a person makes that
commits one catalog bug, and only where that bug's premises hold there (the
model has Dropout or BatchNorm, the schedule is per epoch, the optimizer has
state to lose...); every mutant must parse.
"""

from __future__ import annotations

import ast
from typing import Iterator

from mutation_premises import Operator, assigned, distributed, is_loss_call, per_batch, registry, siblings, step_blocks, training_loop
from mutation_script import OPTIMIZERS, STATEFUL_OPTIMIZERS, Mutant, Script, callee, receiver

OPERATORS: dict[str, tuple[str, Operator]] = {}  # name -> (code, operator)
operator = registry(OPERATORS)


# -- optimizer and gradient lifecycle -------------------------------------------------
@operator("TW101", "delete-zero-grad")


def delete_zero_grad(script: Script) -> Iterator[Mutant | None]:
    for stmt, call in script.expression_statements("zero_grad"):
        loop = training_loop(script, stmt)
        if loop is None:
            continue
        others = [c for c in ast.walk(loop) if isinstance(c, ast.Call) and callee(c) == "zero_grad" and c is not call]
        clears = [n for n in ast.walk(loop) if isinstance(n, ast.Assign) and any(ast.unparse(t).endswith(".grad") for t in n.targets)]
        if not others and not clears and len({receiver(c) for c in ast.walk(loop) if isinstance(c, ast.Call) and script.is_optimizer_step(c)}) == 1:
            yield script.mutant("TW101", "delete-zero-grad", stmt, script.delete(stmt))


@operator("TW102", "zero-grad-after-backward")


def zero_grad_after_backward(script: Script) -> Iterator[Mutant | None]:
    for block, back, step in step_blocks(script):
        zeros = siblings(script, block, lambda c: callee(c) == "zero_grad")
        if len(zeros) == 1 and zeros[0].lineno < back.lineno:
            yield script.mutant("TW102", "zero-grad-after-backward", zeros[0], script.move(zeros[0], back, before=False))


def _clips(script: Script, block: list[ast.stmt]) -> list[ast.stmt]:
    """The clipping statements of ``block``: ``clip_grad_norm_(...)`` on its own or ``grad_norm = clip_grad_norm_(...)``."""
    clips = {"clip_grad_norm_", "clip_grad_value_", "clip_grad_norm"}
    return siblings(script, block, lambda c: callee(c) in clips) + [
        s for s in block if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) and callee(s.value) in clips and script.alone(s)]


@operator("TW103", "clip-before-backward")


def clip_before_backward(script: Script) -> Iterator[Mutant | None]:
    for block, back, step in step_blocks(script):
        for clip in _clips(script, block):
            if back.lineno < clip.lineno < step.lineno:
                yield script.mutant("TW103", "clip-before-backward", clip, script.move(clip, back, before=True))


@operator("TW103", "clip-after-step")


def clip_after_step(script: Script) -> Iterator[Mutant | None]:
    for block, back, step in step_blocks(script):
        for clip in _clips(script, block):
            if back.lineno < clip.lineno < step.lineno:
                yield script.mutant("TW103", "clip-after-step", clip, script.move(clip, step, before=False))


def _enabled_scaler(script: Script, name: str) -> bool:
    built = script.built_with(name, {"GradScaler"})
    if built is None:
        return False
    enabled = next((k.value for k in built.keywords if k.arg == "enabled"), None)
    return enabled is None or (isinstance(enabled, ast.Constant) and enabled.value is True)


@operator("TW104", "delete-unscale")


def delete_unscale(script: Script) -> Iterator[Mutant | None]:
    for stmt, call in script.expression_statements("unscale_"):
        block = script.block_of(stmt)
        if _enabled_scaler(script, receiver(call)) and any(c.lineno > stmt.lineno for c in _clips(script, block)):
            yield script.mutant("TW104", "delete-unscale", stmt, script.delete(stmt))


@operator("TW104", "clip-scaled-gradients")


def clip_scaled_gradients(script: Script) -> Iterator[Mutant | None]:
    """A clip added between ``scaler.scale(loss).backward()`` and ``scaler.step(optimizer)``, with no ``unscale_``."""
    for block, back, step in step_blocks(script):
        scaler = receiver(step.value)
        if receiver(step.value) and _enabled_scaler(script, scaler) and not _clips(script, block) and step.value.args \
                and not script.contains(script.function_of(step), "unscale_"):
            optimizer = ast.unparse(step.value.args[0])
            built = script.built_with(optimizer, OPTIMIZERS)
            if built is not None and built.args:
                clip = f"torch.nn.utils.clip_grad_norm_({ast.unparse(built.args[0])}, 1.0)"
                yield script.mutant("TW104", "clip-scaled-gradients", back, script.insert_after(back, clip))


def _scheduler_steps(script: Script) -> Iterator[tuple[ast.Expr, ast.Call]]:
    names = script.scheduler_names()
    for stmt, call in script.expression_statements("step"):
        if receiver(call) in names and not call.args:
            yield stmt, call


@operator("TW105", "scheduler-before-optimizer")


def scheduler_before_optimizer(script: Script) -> Iterator[Mutant | None]:
    for stmt, _ in _scheduler_steps(script):
        block = script.block_of(stmt)
        steps = [s for s in siblings(script, block, script.is_optimizer_step) if s.lineno < stmt.lineno]
        if len(steps) == 1:
            yield script.mutant("TW105", "scheduler-before-optimizer", stmt, script.move(stmt, steps[0], before=True))
        elif not steps and script.loops_of(stmt) and not per_batch(script, stmt):
            # a per-epoch schedule: stepped at the top of the epoch, before the epoch's training
            block = script.block_of(stmt)
            trains = [s for s in block if s.lineno < stmt.lineno and (script.contains(s, "backward") or any(
                isinstance(c, ast.Call) and callee(c) in script.functions and script.reaches(script.functions[callee(c)], "backward")
                for c in ast.walk(s)))]
            if trains and script.reaches(trains[0], "step"):
                yield script.mutant("TW105", "epoch-scheduler-first", stmt, script.move(stmt, trains[0], before=True))


def _per_epoch_schedule(script: Script, name: str) -> bool:
    built = script.built_with(name, {"StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR"})
    if built is None:
        return False
    if callee(built) != "CosineAnnealingLR":
        return True
    t_max = next((k.value for k in built.keywords if k.arg == "T_max"), built.args[1] if len(built.args) > 1 else None)
    text = ast.unparse(t_max) if t_max is not None else ""
    return "epoch" in text.lower() or (script.int_value(t_max) or 10**6) <= 1000 if t_max is not None else False


@operator("TW106", "scheduler-into-batch-loop")


def scheduler_into_batch_loop(script: Script) -> Iterator[Mutant | None]:
    for stmt, call in _scheduler_steps(script):
        loops = script.loops_of(stmt)
        if not loops or per_batch(script, stmt) or not _per_epoch_schedule(script, receiver(call)):
            continue
        home = script.function_of(stmt)
        visible = [home] + ([script.functions[callee(c)] for c in ast.walk(loops[0]) if isinstance(c, ast.Call)
                             and callee(c) in script.functions] if home is script.tree or "." in receiver(call) else [])
        for function in visible:
            steps = [s for s, c in script.expression_statements("step") if script.is_optimizer_step(c)
                     and script.function_of(s) is function and script.loops_of(s)]
            if len(steps) == 1:
                yield script.mutant("TW106", "scheduler-into-batch-loop", stmt,
                                    script.delete(stmt) + script.insert_after(steps[0], ast.unparse(stmt)))
                break


@operator("TW107", "delete-accumulation-division")


def delete_accumulation_division(script: Script) -> Iterator[Mutant | None]:
    for node in ast.walk(script.tree):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div) or isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Div) \
                and ast.unparse(node.value.left) == ast.unparse(node.targets[0]):
            target = node.target if isinstance(node, ast.AugAssign) else node.targets[0]
            divisor = ast.unparse(node.value if isinstance(node, ast.AugAssign) else node.value.right)
            function = script.function_of(node)
            backs = [c for c in ast.walk(function) if isinstance(c, ast.Call) and callee(c) == "backward"
                     and ast.unparse(target) in ast.unparse(c.func)]
            windows = [n for n in ast.walk(function) if isinstance(n, ast.If) and divisor in ast.unparse(n.test) and "%" in ast.unparse(n.test)
                       and script.contains_step(n)] + [n for n in ast.walk(function) if isinstance(n, ast.For)
                       and divisor in ast.unparse(n.iter) and "range" in ast.unparse(n.iter) and script.contains(n, "backward")]
            if backs and windows and script.alone(node) and not divisor.replace(".", "").isdigit():
                yield script.mutant("TW107", "delete-accumulation-division", node, script.delete(node))


@operator("TW108", "detach-model-output")


def detach_model_output(script: Script) -> Iterator[Mutant | None]:
    for node in ast.walk(script.tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and node.value.args and is_loss_call(script, node.value):
            name = node.targets[0].id
            loop = training_loop(script, node)
            first = node.value.args[0]
            if loop is not None and not isinstance(first, ast.Constant) and not script.in_no_grad(node) and _backpropagated(loop, node, name):
                text = ast.unparse(first)
                detached = f"{text}.detach()" if isinstance(first, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({text}).detach()"
                yield script.mutant("TW108", "detach-model-output", node, script.replace(first, detached))


def _backpropagated(loop: ast.AST, assign: ast.Assign, name: str) -> bool:
    """Whether this very assignment of ``name`` reaches a ``name.backward()`` in the same loop: the next statement that
    mentions the name as a backward comes before any other assignment to it (an evaluation loop's loss of the same
    name, never backpropagated, is no premise)."""
    later = sorted((n for n in ast.walk(loop) if getattr(n, "lineno", 0) > assign.end_lineno), key=lambda n: (n.lineno, n.col_offset))
    for node in later:
        if isinstance(node, ast.Call) and callee(node) == "backward" and receiver(node) == name:
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return False
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return False  # `loss += alpha * reg`: another term still carries the graph to the model
    return False


@operator("TW603", "freeze-whole-model")


def freeze_whole_model(script: Script) -> Iterator[Mutant | None]:
    """``M.requires_grad_(False)`` added right after the optimizer over ``M.parameters()`` is built (a backbone freeze
    that names the whole model), in a script that never sets ``requires_grad`` elsewhere and steps that optimizer in a
    training loop of the same function: every parameter it holds is frozen, so nothing trains."""
    if "requires_grad" in script.source:
        return  # an unfreeze or a freeze of its own: the premises are not the mutant's alone
    for node in ast.walk(script.tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)
                and callee(node.value) in OPTIMIZERS and node.value.args and script.alone(node)):
            continue
        first = node.value.args[0]
        if not (isinstance(first, ast.Call) and callee(first) == "parameters" and not first.args and receiver(first)):
            continue
        name = ast.unparse(node.targets[0])
        steps = [c for c in ast.walk(script.function_of(node)) if isinstance(c, ast.Call) and script.is_optimizer_step(c)
                 and receiver(c) == name and c.lineno > node.lineno and training_loop(script, c) is not None]
        if steps:
            yield script.mutant("TW603", "freeze-whole-model", node, script.insert_after(node, f"{receiver(first)}.requires_grad_(False)"))


# -- resume and many processes -----------------------------------------------------
@operator("TW110", "delete-set-epoch")


def delete_set_epoch(script: Script) -> Iterator[Mutant | None]:
    """``sampler.set_epoch(epoch)`` deleted where it runs once per epoch: in a loop whose own level takes no optimizer
    step (an epoch loop around the batch loop), or at the top of a per-epoch method called from one
    (``_run_epoch``). One written inside the batch loop of a single pass over the data (``set_epoch(ii)`` per batch)
    guards no repeated epoch: deleting it commits nothing."""
    samplers = [c for c in script.calls if callee(c) == "DistributedSampler"
                and not any(k.arg == "shuffle" and isinstance(k.value, ast.Constant) and k.value.value is False for k in c.keywords)]
    for stmt, call in script.expression_statements("set_epoch"):
        per_epoch = (script.loops_of(stmt) and not per_batch(script, stmt)) or (
            not script.loops_of(stmt) and script.called_in_loop(script.function_of(stmt)))
        if samplers and per_epoch:
            yield script.mutant("TW110", "delete-set-epoch", stmt, script.delete(stmt))


@operator("TW111", "drop-distributed-sampler")


def drop_distributed_sampler(script: Script) -> Iterator[Mutant | None]:
    """The ``sampler=DistributedSampler(...)`` dropped from a loader that feeds training: one that says train, or
    whose name a loop that trains iterates."""
    if not distributed(script):
        return
    for call in script.calls:
        if callee(call) == "DataLoader":
            sampler = next((k.value for k in call.keywords if k.arg == "sampler"), None)
            if sampler is not None and "DistributedSampler" in "".join(ast.unparse(c) for c in assigned(script, ast.unparse(sampler))) \
                    and ("train" in ast.unparse(call).lower() or _feeds_training(script, call)):
                yield script.mutant("TW111", "drop-distributed-sampler", call, script.drop_keyword(call, "sampler"))


def _feeds_training(script: Script, loader: ast.Call) -> bool:
    """Whether the name ``loader`` is assigned to is iterated by a loop that runs backward and an optimizer step."""
    stmt = script.statement(loader)
    names = {ast.unparse(t) for t in stmt.targets} if isinstance(stmt, ast.Assign) and stmt.value is loader else set()
    return any(isinstance(loop, (ast.For, ast.AsyncFor)) and any(ast.unparse(n) in names for n in ast.walk(loop.iter))
               and script.reaches(loop, "backward") and script.contains_step(loop) for loop in ast.walk(script.tree))


@operator("TW112", "delete-optimizer-restore")


def delete_optimizer_restore(script: Script) -> Iterator[Mutant | None]:
    for stmt, call in script.expression_statements("load_state_dict"):
        who = receiver(call)
        built = script.built_with(who, OPTIMIZERS)
        stateful = built is not None and (callee(built) in STATEFUL_OPTIMIZERS or any(
            k.arg == "momentum" and not (isinstance(k.value, ast.Constant) and k.value.value == 0) for k in built.keywords))
        function = script.function_of(stmt)
        restores_model = any(isinstance(c, ast.Call) and callee(c) == "load_state_dict" and receiver(c) != who
                             and script.is_model(receiver(c).removesuffix(".module")) for c in ast.walk(function))
        if stateful and restores_model:
            yield script.mutant("TW112", "delete-optimizer-restore", stmt, script.delete(stmt))


@operator("TW113", "forward-through-module")


def forward_through_module(script: Script) -> Iterator[Mutant | None]:
    """The training forward through the DDP wrapper (``model(x)``, ``self.model(x)``) rewritten to go through
    ``.module``: in a loop that trains, or in a per-batch method called from one (``_run_batch``). Only the first
    forward through the wrapper there, and only when every other one sits in an ``if`` that does not hold it: a
    forward through the wrapper that runs whenever the rewritten one does still all-reduces the whole loss."""
    wrapped = {ast.unparse(t) for n in ast.walk(script.tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
               and callee(n.value) in {"DistributedDataParallel", "DDP"} for t in n.targets}
    for call in script.calls:
        name = ast.unparse(call.func) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
        if name not in wrapped or script.in_no_grad(call):
            continue
        body = training_loop(script, call)
        if body is None:
            home = script.function_of(call)
            if home is script.tree or not (script.contains(home, "backward") and script.contains_step(home) and script.called_in_loop(home)):
                continue
            body = home
        others = [c for c in ast.walk(body) if isinstance(c, ast.Call) and c is not call and isinstance(c.func, (ast.Name, ast.Attribute))
                  and ast.unparse(c.func) == name and not script.in_no_grad(c)]
        if any((c.lineno, c.col_offset) < (call.lineno, call.col_offset) for c in others):
            continue
        if all(_apart(script, c, call, body) for c in others):
            yield script.mutant("TW113", "forward-through-module", call, script.replace(call.func, f"{name}.module"))


def _apart(script: Script, other: ast.AST, call: ast.AST, body: ast.AST) -> bool:
    """Whether ``other`` sits in an ``if`` (inside ``body``) that does not hold ``call``."""
    for above in script.ancestors(other):
        if above is body:
            return False
        if isinstance(above, ast.If) and not any(n is call for n in ast.walk(above)):
            return True
    return False


# -- modes and the autograd graph ------------------------------------------------------
def _mode_calls(script: Script, mode: str) -> Iterator[tuple[ast.Expr, ast.Call]]:
    for stmt, call in script.expression_statements(mode):
        if not (mode == "train" and call.args and not (isinstance(call.args[0], ast.Constant) and call.args[0].value is True)):
            yield stmt, call


@operator("TW201", "delete-train-mode")


def delete_train_mode(script: Script) -> Iterator[Mutant | None]:
    for stmt, call in _mode_calls(script, "train"):
        model = receiver(call)
        same = [c for _, c in _mode_calls(script, "train") if receiver(c) == model]
        if len(same) != 1 or script.has_mode_layers(model) is not True:
            continue
        # an epoch loop that trains and then evaluates (model.eval(), directly or in a helper of this file)
        epochs = [loop for loop in ast.walk(script.tree) if isinstance(loop, (ast.For, ast.While))
                  and script.reaches(loop, "backward") and script.reaches(loop, "eval")]
        if epochs:
            yield script.mutant("TW201", "delete-train-mode", stmt, script.delete(stmt))


def _forwards(script: Script, model: str, within: ast.AST, after: int) -> list[ast.Call]:
    return [c for c in ast.walk(within) if isinstance(c, ast.Call) and ast.unparse(c.func) == model and c.lineno > after]


@operator("TW202", "delete-eval-mode")


def delete_eval_mode(script: Script) -> Iterator[Mutant | None]:
    for stmt, call in _mode_calls(script, "eval"):
        model = receiver(call)
        function = script.function_of(stmt)
        if script.has_mode_layers(model, function) is True and _forwards(script, model, function, stmt.lineno) \
                and not [c for c in ast.walk(function) if isinstance(c, ast.Call) and callee(c) == "backward" and c.lineno > stmt.lineno]:
            yield script.mutant("TW202", "delete-eval-mode", stmt, script.delete(stmt))


def _evaluates(script: Script, node: ast.AST) -> bool:
    """A forward of a model of this project inside ``node`` that runs here, and nothing there that needs a graph."""
    calls = [c for c in ast.walk(node) if isinstance(c, ast.Call)]
    within = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else script.function_of(node)
    return any(isinstance(c.func, ast.Name | ast.Attribute) and script.computes_locally(ast.unparse(c.func), within) for c in calls) \
        and not any(callee(c) in {"backward", "grad", "enable_grad"} for c in calls)


def _before_a_backward(script: Script, node: ast.stmt) -> bool:
    """Whether a later statement of the same block runs a backward: the block computes inputs of a training step (a
    frozen backbone's features for a trained head, a generator's fakes for the discriminator's step). Without its
    ``no_grad`` the gradients flow into the network that should stay fixed: another mistake than TW203's."""
    return any(s.lineno > (node.end_lineno or node.lineno) and script.contains(s, "backward") for s in script.block_of(node))


def _once(script: Script, node: ast.AST) -> bool:
    """A block of the script's straight-line code that runs one time, with no loop in it (a prediction for a plot after
    training): its graph costs one batch once, the shape the catalog leaves alone (TW203's good one-prediction case)."""
    return script.function_of(node) is script.tree and not script.loops_of(node) \
        and not any(isinstance(n, (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.GeneratorExp)) for n in ast.walk(node))


@operator("TW203", "delete-no-grad")


def delete_no_grad(script: Script) -> Iterator[Mutant | None]:
    for node in ast.walk(script.tree):
        if isinstance(node, ast.With) and len(node.items) == 1 and isinstance(node.items[0].context_expr, ast.Call) \
                and callee(node.items[0].context_expr) in {"no_grad", "inference_mode"} and node.items[0].optional_vars is None \
                and not script.in_no_grad(node) and _evaluates(script, node) and not _once(script, node) \
                and not _before_a_backward(script, node) and node.body[0].lineno > node.lineno:
            inner, outer = script.indent(node.body[0]), script.indent(node)
            body = [outer + line[len(inner):] if line.startswith(inner) else line for line in script.lines[node.lineno:node.end_lineno]]
            yield script.mutant("TW203", "delete-no-grad", node, [(node.lineno - 1, node.end_lineno or node.lineno, body)])


@operator("TW203", "delete-no-grad-decorator")


def delete_no_grad_decorator(script: Script) -> Iterator[Mutant | None]:
    for function in script.functions.values():
        for decorator in function.decorator_list:
            if isinstance(decorator, ast.Call) and callee(decorator) in {"no_grad", "inference_mode"} \
                    and decorator.lineno == decorator.end_lineno and _evaluates(script, function):
                yield script.mutant("TW203", "delete-no-grad-decorator", decorator, [(decorator.lineno - 1, decorator.lineno, [])])


@operator("TW204", "keep-loss-tensor")


def keep_loss_tensor(script: Script) -> Iterator[Mutant | None]:
    for call in script.calls:
        if callee(call) != "item" or call.args or not isinstance(call.func, ast.Attribute) or not isinstance(call.func.value, ast.Name):
            continue
        name = call.func.value.id
        stmt = script.statement(call)
        keeps = isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) or isinstance(stmt, ast.Expr) \
            and isinstance(stmt.value, ast.Call) and callee(stmt.value) == "append" and call in stmt.value.args
        function = script.function_of(stmt)
        backs = [c for c in ast.walk(function) if isinstance(c, ast.Call) and callee(c) == "backward" and receiver(c) == name]
        if keeps and backs and not script.in_no_grad(stmt) and script.loops_of(stmt) and not _computed_without_grad(script, function, stmt, name):
            yield script.mutant("TW204", "keep-loss-tensor", call, script.replace(call, name))


def _computed_without_grad(script: Script, function: ast.AST, stmt: ast.stmt, name: str) -> bool:
    """Whether the value of ``name`` that ``stmt`` reads was computed under ``no_grad`` (an evaluation loop's loss): a
    tensor without a graph, which keeps nothing alive."""
    before = [n for n in ast.walk(function) if isinstance(n, ast.Assign) and n.lineno < stmt.lineno
              and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    last = max(before, key=lambda n: n.lineno, default=None)
    return last is not None and script.in_no_grad(last)
