"""Roles: what a key holds (model, optimizer, scheduler, scaler, loss, loader), learnt from
the constructor it was assigned from (resolved through the file's imports), from the
arguments a local class or function is called with, and from usage.

Mixed into :class:`trainwell.lint.context.FileContext`.
"""

from __future__ import annotations

import ast
import copy
import re
import textwrap
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from trainwell.lint.syntax import key_of, kwarg, method_name, strip_identity, walk

OPTIMIZERS = {
    "SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "LBFGS", "NAdam",
    "RAdam", "RMSprop", "Rprop", "SparseAdam", "Adafactor", "Lion", "Muon",
}
# scheduler class -> its kind when nothing in its arguments says otherwise
SCHEDULERS = {
    "StepLR": "epoch", "MultiStepLR": "epoch", "ExponentialLR": "epoch", "ReduceLROnPlateau": "epoch",
    "CosineAnnealingLR": "sized", "CosineAnnealingWarmRestarts": "sized", "PolynomialLR": "sized",
    "OneCycleLR": "step", "CyclicLR": "step", "LambdaLR": "unknown", "MultiplicativeLR": "unknown",
    "LinearLR": "unknown", "ConstantLR": "unknown", "SequentialLR": "unknown", "ChainedScheduler": "unknown",
}
SIZE_ARGS = ("step_size", "milestones", "T_max", "T_0", "total_iters")
_STEP_WORDS = re.compile(r"len\(|step|iter|batch|warmup", re.I)
_EPOCH_WORDS = re.compile(r"epoch", re.I)
_MODEL_WRAPPERS = {"DistributedDataParallel", "DataParallel", "DDP", "compile"}
_READS_ROLES = _MODEL_WRAPPERS | {"deepcopy"}  # classify() reads the roles for these: never memoised
_MODE_LAYERS = re.compile(r"Dropout|BatchNorm|dropout|batch_norm|SyncBatchNorm")
# wrappers that hand back the same loader, sampling unchanged (Accelerate, Fabric)
_LOADER_KEEPERS = {"prepare", "setup_dataloaders", "prepare_data_loader", "setup"}
TORCHVISION_BY_NAME = "torchvision.models[name]"  # Role.cls of a torchvision model looked up by name
_UNSEEN_ROLE = object()  # classify()'s memo: a node not asked about yet
_PEFT_LOADERS = re.compile(r"(Auto)?Peft(Mixed)?Model")  # PEFT classes whose `from_pretrained` loads adapters frozen
_NOT_MODELS = re.compile(r"Tokenizer|Processor|Config|FeatureExtractor|Dataset|Pipeline", re.I)


@dataclass


class Role:
    """What a key holds, and where it was made."""

    kind: str  # model | optimizer | scheduler | scaler | loss | loader
    node: ast.AST | None = None
    cls: str = ""  # constructor's class name (StepLR, CrossEntropyLoss, the model class)
    info: dict[str, Any] = field(default_factory=dict)


class RoleIndex:
    """The role of each key in one file (needs ``qualname``, ``call_name``, ``classes``, ``calls``... from the context)."""

    tree: ast.Module
    nodes: list[ast.AST]
    classes: dict[str, ast.ClassDef]
    functions: dict[str, Any]
    methods: dict[str, dict[str, Any]]

    # -- roles ---------------------------------------------------------------
    def classify(self, value: ast.expr) -> Role | None:
        """The role of whatever ``value`` constructs, or None when it is not a known constructor."""
        value = strip_identity(value)
        if not isinstance(value, ast.Call):
            return None
        memo = self.__dict__.setdefault("_classified", {})  # every rule asks about the same constructors: once per node
        found = memo.get(value, _UNSEEN_ROLE)
        if found is _UNSEEN_ROLE:
            found = self._classify(value)
            if (self.call_name(value) or "").rsplit(".", 1)[-1] not in _READS_ROLES:
                memo[value] = found  # a copy or a wrapper reads the roles, which may still be in the making: asked again
        return found

    def _classify(self, value: ast.Call) -> Role | None:
        qual = self.call_name(value) or ""
        last = qual.rsplit(".", 1)[-1]
        local = key_of(value.func)
        if qual.startswith("torch.optim.lr_scheduler.") or (qual.startswith("transformers") and "schedule" in last):
            return Role("scheduler", value, last, {"per": self._schedule_kind(last, value)})
        if qual.startswith("torch.optim.") and last in OPTIMIZERS or (last in OPTIMIZERS and qual):
            return Role("optimizer", value, last)
        if last == "GradScaler" and qual.startswith("torch"):
            enabled = kwarg(value, "enabled")
            return Role("scaler", value, last, {"enabled": not (isinstance(enabled, ast.Constant) and enabled.value is False)})
        if last == "DataLoader" and qual.startswith("torch"):
            return Role("loader", value, last)
        if qual.startswith("torch.nn.") and last.endswith("Loss"):
            return Role("loss", value, last)
        if local in self.classes:
            if self.is_module_class(local):
                return Role("loss" if local.endswith("Loss") else "model", value, local)
            return None
        project = getattr(self, "project", None)
        if project is not None and local is not None and not qual.startswith(("torch", "transformers", "timm")):
            found = project.module_class(self, value.func)  # `GPT(config)` after `from model import GPT`
            if found is not None:
                return Role("loss" if found[1].endswith("Loss") else "model", value, found[1], {"home": found[0]})
        if qual == "timm.create_model":
            return Role("model", value, last)
        if last == "deepcopy" and value.args:  # a new object: a role of its own, not an alias
            inner_key = key_of(strip_identity(value.args[0]))
            source = self.roles.get(inner_key or "") or self.classify(value.args[0])
            return Role(source.kind, value, source.cls) if source is not None and source.kind == "model" else None
        if last in _MODEL_WRAPPERS and value.args:
            inner = self.classify(value.args[0])
            if inner is not None and inner.kind == "model":
                return inner
            inner_key = key_of(value.args[0])
            if inner_key and (role := self.roles.get(inner_key)) and role.kind == "model":
                return role
            return None
        if qual.startswith("torch.nn.") and last[:1].isupper() and not last.endswith("Loss") and last not in ("Parameter", "ParameterList", "ParameterDict"):
            return Role("model", value, last)
        if qual.startswith("torchvision.models") or (last == "from_pretrained" and not _NOT_MODELS.search(local or qual)):
            return Role("model", value, last)
        if isinstance(value.func, ast.Attribute) and value.func.attr == "from_pretrained" and key_of(value.func.value) in self.classes \
                and self.is_module_class(key_of(value.func.value)):  # type: ignore[arg-type]
            return Role("model", value, "from_pretrained")  # `GPT.from_pretrained("gpt2")` of a module class of this file
        if self._torchvision_by_name(value):
            return Role("model", value, TORCHVISION_BY_NAME)
        return None

    def _torchvision_by_name(self, call: ast.Call) -> bool:
        """``models.__dict__[args.arch]()`` / ``getattr(models, args.arch)()`` after ``import torchvision.models as
        models``: a torchvision model picked by its name at run time (a fresh module, in training mode)."""
        func = call.func
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Attribute) and func.value.attr == "__dict__":
            return self.qualname(func.value.value) == "torchvision.models"
        return isinstance(func, ast.Call) and key_of(func.func) == "getattr" and len(func.args) == 2 \
            and self.qualname(func.args[0]) == "torchvision.models"

    def _schedule_kind(self, cls: str, call: ast.Call) -> str:
        kind = SCHEDULERS.get(cls, "step" if "schedule" in cls else "unknown")
        if kind in ("step", "unknown"):
            return kind
        sizes = [k.value for k in call.keywords if k.arg in SIZE_ARGS] + list(call.args[1:2])
        text = " ".join(ast.unparse(s) for s in sizes)
        if _STEP_WORDS.search(text):
            return "step"
        if _EPOCH_WORDS.search(text) or cls in ("ReduceLROnPlateau", "ExponentialLR"):
            return "epoch"
        if kind == "epoch":
            return "epoch"
        return "unknown"  # a bare literal T_max could count epochs or steps

    @cached_property
    def roles(self) -> dict[str, Role]:
        """Role of every key that the file assigns from a known constructor (or uses as one)."""
        roles: dict[str, Role] = {}
        assigns: list[tuple[str, ast.expr]] = []
        for node in self.nodes_of(ast.Assign, ast.AnnAssign):  # type: ignore[attr-defined]
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)) \
                    and isinstance(node.value, (ast.Tuple, ast.List)) and len(node.value.elts) == len(node.targets[0].elts):
                targets = list(zip(node.targets[0].elts, node.value.elts))  # `D, G = Discriminator(), Generator()`
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                targets = [(node.targets[0], node.value)]
            elif isinstance(node, (ast.AnnAssign,)) and node.value is not None:
                targets = [(node.target, node.value)]
            else:
                continue
            for target, value in targets:
                key = key_of(target)
                if key is not None:
                    assigns.append((key, value))
        self.__dict__["roles"] = roles  # lets classify() see roles found so far (wrappers of a model)
        for key, value in assigns:
            role = self.classify(value)
            if role is not None:
                previous = roles.get(key)
                if previous is None or previous.kind == role.kind:
                    roles[key] = role
                else:
                    roles[key] = Role("ambiguous")
        self._roles_from_arguments(roles)
        self._loaders_replaced(roles)
        self._roles_from_usage(roles)
        self._roles_of_project_instances(roles)
        for key, value in assigns:  # wrappers and copies of models that only usage revealed
            if key not in roles and (role := self.classify(value)) is not None:
                roles[key] = role
        for key, value in assigns:  # `b = a` copies a's role (the same object: the keys are aliases)
            source = key_of(strip_identity(value))
            if key not in roles and source in roles:
                roles[key] = roles[source]
        return roles

    def _loaders_replaced(self, roles: dict[str, Role]) -> None:
        """A loader key that is assigned again from a call we do not know (``model, opt, loader =
        privacy_engine.make_private(...)`` returns a Poisson-sampled loader) no longer proves how it samples."""
        if not any(role.kind == "loader" for role in roles.values()):
            return  # no loader to make ambiguous: no need to classify every assigned call again
        for node in self.assigns:
            if not isinstance(node.value, ast.Call):
                continue
            name = (key_of(node.value.func) or "").rsplit(".", 1)[-1]
            if name in _LOADER_KEEPERS or key_of(node.value.func) in self.functions or self.classify(node.value) is not None:
                continue  # a helper of this file is read where it builds the loader
            for target in node.targets:
                for element in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]):
                    key = key_of(element)
                    if key is not None and (role := roles.get(key)) is not None and role.kind == "loader":
                        roles[key] = Role("ambiguous")

    def _roles_from_arguments(self, roles: dict[str, Role]) -> None:
        """``Trainer(Net())`` / ``train(model=Net())``: the parameter takes the role of what is passed."""
        for call in self.calls:
            name = key_of(call.func)
            target = self.methods.get(name or "", {}).get("__init__") if name in self.classes else self.functions.get(name or "")
            if target is None:
                continue
            params = [a.arg for a in target.args.posonlyargs + target.args.args]
            if name in self.classes:
                params = params[1:]
            pairs = list(zip(params, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]
            for param, arg in pairs:
                if isinstance(arg, ast.Starred):
                    break
                role = self.classify(arg) or roles.get(key_of(strip_identity(arg)) or "")
                if role is not None and role.kind != "ambiguous" and param not in roles:
                    roles[param] = role

    def _roles_from_usage(self, roles: dict[str, Role]) -> None:
        """An object whose parameters an optimizer holds is a model, however it was built (a factory, a registry,
        ``importlib``): ``Adam(model.parameters())``, ``Adam(params)`` after ``params = [p for p in
        model.parameters() if p.requires_grad]``, and the whole of ``model`` when it is called and the optimizer holds
        its parts' parameters (``[{"params": model.encoder.parameters()}, {"params": model.head.parameters()}]``, also
        ``model.module.linear.parameters()`` of a DDP-wrapped ``model``)."""
        called = {key_of(c.func) for c in self.calls}
        for node in self.calls:
            qual = self.call_name(node) or ""
            if qual.startswith("torch.optim.") and qual.rsplit(".", 1)[-1] in OPTIMIZERS:
                names = {n.id for n in walk(node) if isinstance(n, ast.Name)}
                sources = [node, *(a.value for a in self.assignments_to(names)), *self._filled_from(names)]
                for model in (m for source in sources for m in self.parameter_owners(source)):
                    if model and model not in roles:
                        roles[model] = Role("model", None, "")
                    parts = (model or "").split(".")  # `model.module.linear` held: `model.module`, then `model`
                    whole = next((w for w in (".".join(parts[:n]) for n in range(len(parts) - 1, 0, -1)) if w in called), None)
                    if whole and whole != "self" and whole not in roles:
                        roles[whole] = Role("model", None, "")
            receiver = roles.get(key_of(node.func.value) or "") if isinstance(node.func, ast.Attribute) else None
            if method_name(node) in ("step", "unscale_") and receiver is not None and receiver.kind == "scaler" and node.args:
                opt = key_of(node.args[0])
                if opt and opt not in roles:
                    roles[opt] = Role("optimizer", None, "")
        self._optimizers_from_usage(roles)

    def _filled_from(self, names: set[str]) -> list[ast.expr]:
        """The ``M.named_parameters()`` / ``M.parameters()`` of the loops that append their items to one of ``names``
        (``for name, p in model.named_parameters(): (head if "head" in name else trunk).append(p)``)."""
        filled = self.__dict__.get("_parameter_loops")  # asked per optimizer: each loop's appended-to keys, found once
        if filled is None:
            filled = self.__dict__["_parameter_loops"] = [
                (loop.iter, set().union(*(_receivers(n.func.value) for stmt in loop.body for n in walk(stmt)  # type: ignore[attr-defined]
                                          if isinstance(n, ast.Call) and method_name(n) == "append")))
                for loop in self.nodes_of(ast.For) if method_name(loop.iter) in ("parameters", "named_parameters")]  # type: ignore[attr-defined]
        return [iterable for iterable, receivers in filled if receivers & names]

    def _optimizers_from_usage(self, roles: dict[str, Role]) -> None:
        """Optimizers however they were built (a factory, ``model.configure_optimizers()``, a parameter of a helper),
        known from what is done with them: the first argument of an LR scheduler's constructor (``StepLR(opt, ...)``
        takes nothing else), a key that is both cleared and stepped (``opt.zero_grad()`` and ``opt.step()``:
        no other PyTorch object has both), and a stepped key named as one (``optimizer.step()`` in a library's
        ``train(model, loader, optimizer)`` that nothing in the file calls); then the loop variables over a list of optimizers (``for net, opt in
        zip(nets, optimizers)``), and the parameters of the helpers they are passed to. A stepped key whose
        ``param_groups`` are read (``for g in optimizer.param_groups: g["lr"] = lr``) is one too: only an optimizer
        has both."""
        found: list[str] = []
        for role in list(roles.values()):
            if role.kind == "scheduler" and isinstance(role.node, ast.Call) and role.cls != "ChainedScheduler":
                first = role.node.args[0] if role.node.args else kwarg(role.node, "optimizer")
                found.append(key_of(strip_identity(first)) if first is not None else None)  # type: ignore[arg-type]
        cleared, stepped, called = set(), set(), set()
        for node in self.calls:
            name = method_name(node)
            if name in ("zero_grad", "step"):
                (cleared if name == "zero_grad" else stepped).add(key_of(node.func.value))  # type: ignore[union-attr]
            called.add(key_of(node.func))
        grouped = {key_of(n.value) for n in self.nodes_of(ast.Attribute) if n.attr == "param_groups"}  # type: ignore[attr-defined]
        instances = {**getattr(self, "instances", {}), **self.project_instances}
        named = {k for k in stepped if k and _OPTIMIZER_NAME.search(k.rpartition(".")[2])}
        found += [k for k in ((cleared | grouped) & stepped) | named if k not in called and k not in instances]
        for key in found:
            if key and key not in roles:
                roles[key] = Role("optimizer", None, "")
        for loop in self.nodes_of(ast.For, ast.AsyncFor):  # type: ignore[attr-defined]
            for target, iterable in _loop_pairs(loop.target, loop.iter):
                key = key_of(target)
                if key and key not in roles and self._holds_optimizers(iterable, roles):
                    roles[key] = Role("optimizer", None, "")
                    found.append(key)
        if found:
            self._roles_from_arguments(roles)

    def _holds_optimizers(self, iterable: ast.expr, roles: dict[str, Role]) -> bool:
        """Whether ``iterable`` is a list (or tuple) whose every element is an optimizer: a literal of optimizer keys or
        constructors, a comprehension that builds one per item, or a name every assignment of which is such a list."""
        def optimizer(value: ast.expr) -> bool:
            role = self.classify(value) or roles.get(key_of(strip_identity(value)) or "")
            return role is not None and role.kind == "optimizer"
        if isinstance(iterable, (ast.List, ast.Tuple)):
            return bool(iterable.elts) and all(optimizer(e) for e in iterable.elts)
        if isinstance(iterable, ast.ListComp):
            return optimizer(iterable.elt)
        name = key_of(iterable)
        values = [a.value for a in self.assignments_to({name}) if name and len(a.targets) == 1 and key_of(a.targets[0]) == name]
        return bool(values) and all(isinstance(v, (ast.List, ast.Tuple, ast.ListComp)) and self._holds_optimizers(v, roles) for v in values)

    @cached_property
    def instances(self) -> dict[str, str]:
        """Keys assigned an instance of a local class that is not a module (a Trainer): key -> class."""
        found: dict[str, str] = {}
        for node in self.assigns:
            if len(node.targets) == 1 and isinstance(node.value, ast.Call):
                cls, key = self._instance_class(node.value), key_of(node.targets[0])
                if cls is not None and key is not None and not self.is_module_class(cls):
                    found[key] = cls
        return found

    @cached_property
    def project_instances(self) -> dict[str, tuple[Any, ast.ClassDef, ast.Call]]:
        """Keys assigned (once) an instance of a class of another file of the checked tree that is not a module (a
        ``Trainer`` of ``trainer.py``): key -> (that file's context, the class, the constructor call)."""
        project = getattr(self, "project", None)
        if project is None:
            return {}
        found: dict[str, tuple[Any, ast.ClassDef, ast.Call]] = {}
        counts: dict[str, int] = {}
        for node in self.assigns:
            key = key_of(node.targets[0]) if len(node.targets) == 1 else None
            if key is None:
                continue
            counts[key] = counts.get(key, 0) + 1
            call = node.value
            if isinstance(call, ast.Call) and key_of(call.func) not in self.classes:
                hit = project.class_def(self, call.func)
                if hit is not None and not hit[0].is_module_class(hit[1].name):
                    found[key] = (hit[0], hit[1], call)
        for node in self.nodes_of(ast.AnnAssign):  # type: ignore[attr-defined]  # `scaler: GradScaler = ...` elsewhere: two kinds
            if isinstance(node, ast.AnnAssign) and (key := key_of(node.target)) in counts:
                counts[key] += 1
        return {k: v for k, v in found.items() if counts[k] == 1}

    def _roles_of_project_instances(self, roles: dict[str, Role]) -> None:
        """``trainer = Trainer(model, optimizer)`` with ``Trainer`` of another file: ``trainer.optimizer`` holds what
        ``__init__`` stores there, the argument passed for the parameter it assigns (``self.optimizer = optimizer``)
        or an object it builds itself (``self.opt = torch.optim.Adam(...)``, read in that file)."""
        for key, (home, cls, call) in self.project_instances.items():
            init = home.methods.get(cls.name, {}).get("__init__")
            if init is None:
                continue
            params = [a.arg for a in init.args.posonlyargs + init.args.args][1:]
            bound: dict[str, ast.expr] = {}
            for param, arg in zip(params, call.args):
                if isinstance(arg, ast.Starred):
                    break
                bound[param] = arg
            bound.update({k.arg: k.value for k in call.keywords if k.arg})
            found: dict[str, Role | None] = {}
            for method in _built_by(home, cls.name, init):
                for node in walk(method):
                    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                        continue
                    target = key_of(node.targets[0])
                    if target is None or not target.startswith("self.") or target.count(".") != 1:
                        continue
                    name = key_of(strip_identity(node.value))
                    if name in bound and method is init:
                        arg = bound[name]  # type: ignore[index]
                        role = self.classify(arg) or roles.get(key_of(strip_identity(arg)) or "")
                    else:
                        role = home.classify(node.value) if name is None else None
                    if role is None or role.kind == "ambiguous":
                        continue
                    attr = f"{key}.{target[5:]}"
                    seen = found.setdefault(attr, role)
                    if seen is not None and seen.kind != role.kind:
                        found[attr] = None  # two kinds of object under one attribute: known as neither
            for attr, role in found.items():
                if role is not None and attr not in roles:
                    roles[attr] = role

    def _instance_class(self, call: ast.Call) -> str | None:
        """``Trainer(...)`` -> Trainer; ``Trainer(...).fit(...)`` too when ``fit`` returns self."""
        name = key_of(call.func)
        if name in self.classes:
            return name
        if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
            cls = self._instance_class(call.func.value)
            method = self.methods.get(cls or "", {}).get(call.func.attr)
            if method is not None and any(isinstance(n, ast.Return) and key_of(n.value) == "self" for n in walk(method)):
                return cls
        return None

    def role(self, key: str | None) -> Role | None:
        if key is None:
            return None
        role = self.roles.get(key)
        if role is None or role.kind == "ambiguous":
            return None
        return role

    def is_optimizer(self, key: str | None) -> bool:
        """Whether ``key`` is known to hold an optimizer (built from a known class, or stepped by a GradScaler); never from its name."""
        role = self.role(key)
        return role is not None and role.kind == "optimizer"

    def is_scheduler(self, key: str | None) -> bool:
        """Whether ``key`` is known to hold an LR scheduler; never from its name."""
        role = self.role(key)
        return role is not None and role.kind == "scheduler"

    def is_model(self, key: str | None) -> bool:
        role = self.role(key)
        return role is not None and role.kind == "model"

    def builds_in_train_mode(self, role: Role) -> bool:
        """Whether the constructor behind a model role returns it in training mode (every fresh ``nn.Module`` does;
        ``from_pretrained`` returns eval mode; a wrapper or copy keeps whatever mode its input had)."""
        if role.kind != "model" or not isinstance(role.node, ast.Call):
            return False
        qual = self.call_name(role.node) or ""
        local = key_of(role.node.func)
        if role.cls == "from_pretrained" and isinstance(role.node.func, ast.Attribute):
            return self._builds_a_fresh_instance(role.node.func)
        return (local in self.classes and role.cls == local) or "home" in role.info or role.cls == TORCHVISION_BY_NAME \
            or (qual.startswith(("torch.nn.", "torchvision.models.")) and qual.rsplit(".", 1)[-1] == role.cls)

    def loads_frozen(self, value: ast.expr) -> bool | None:
        """Whether ``value`` loads a model with every parameter frozen: PEFT's ``PeftModel.from_pretrained(base, path)``
        (and ``AutoPeftModel*`` / ``PeftMixedModel``) loads adapters for inference unless ``is_trainable=True`` is
        passed. True or False for such a load (a flag that is not a literal may be off: frozen), None for anything else."""
        value = strip_identity(value)
        qual = self.call_name(value) or ""
        if not (qual.startswith("peft.") and qual.endswith(".from_pretrained") and _PEFT_LOADERS.match(qual.split(".")[-2])):
            return None
        position = 2 if qual.split(".")[-2].startswith("Auto") else 3  # `is_trainable` after (model,) model_id, adapter_name
        flag = kwarg(value, "is_trainable")  # type: ignore[arg-type]
        if flag is None and len(value.args) > position and not any(isinstance(a, ast.Starred) for a in value.args):  # type: ignore[attr-defined]
            flag = value.args[position]  # type: ignore[attr-defined]
        return not (isinstance(flag, ast.Constant) and flag.value is True)

    def layer_method(self, key: str | None, name: str) -> Any:
        """The method ``name`` of the module class (of this file or another file of the tree) behind the model ``key``
        when it runs the module's own layers (``self.encoder(x)``, ``self(x)``): calling it is a forward pass
        (``model.generate(content, style)``). None for any other method, or a model of unknown class."""
        role = self.role(key)
        if role is None or role.kind != "model" or name.startswith("__"):
            return None
        home = role.info.get("home") or (self if role.cls in self.classes else None)
        return home._layer_method(role.cls, name, frozenset()) if home is not None else None

    def _layer_method(self, cls: str, name: str, seen: frozenset[str]) -> Any:
        cache = self.__dict__.setdefault("_layer_methods", {})
        if (cls, name) not in cache:
            cache[(cls, name)] = None
            method = self.methods.get(cls, {}).get(name)
            if method is None and cls not in seen and cls in self.classes:
                for base in self.classes[cls].bases:  # a method inherited from a local base class
                    if key_of(base) in self.classes and (found := self._layer_method(key_of(base), name, seen | {cls})) is not None:
                        method = found
                        break
                cache[(cls, name)] = method
                return method
            layers = self._layer_attributes(cls)
            if method is not None and any(isinstance(n, ast.Call) and (key_of(n.func) in ("self", "self.forward") or (
                    (key_of(n.func) or "").startswith("self.") and key_of(n.func)[5:] in layers)) for n in walk(method)):  # type: ignore[index]
                cache[(cls, name)] = method
        return cache[(cls, name)]

    def _layer_attributes(self, cls: str) -> set[str]:
        """The attributes ``__init__`` of the local class ``cls`` assigns a module (``self.encoder = Encoder()``)."""
        init = self.methods.get(cls, {}).get("__init__")
        found: set[str] = set()
        for node in walk(init) if init is not None else []:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and (key_of(node.targets[0]) or "").count(".") == 1 \
                    and key_of(node.targets[0]).startswith("self.") and (role := self.classify(node.value)) is not None \
                    and role.kind == "model":  # type: ignore[union-attr]
                found.add(key_of(node.targets[0])[5:])  # type: ignore[index]
        return found

    def _builds_a_fresh_instance(self, func: ast.Attribute) -> bool:
        """Whether ``GPT.from_pretrained`` is a class method of a module class of the tree that returns an instance it
        builds itself (``model = GPT(config)`` ... ``return model``) and never switches its mode: a fresh module, in
        training mode (a library's ``from_pretrained`` returns eval mode)."""
        name = key_of(func.value)
        project = getattr(self, "project", None)
        found = (self, self.classes[name]) if name in self.classes else project.class_def(self, func.value) if project is not None else None
        if found is None or not found[0].is_module_class(found[1].name):
            return False
        home, cls = found
        method = home.methods.get(cls.name, {}).get(func.attr)
        if method is None:
            return False
        returns = [n.value for n in walk(method) if isinstance(n, ast.Return)]
        built = {key_of(t) for n in walk(method) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                 and key_of(n.value.func) in ("cls", cls.name) for t in n.targets}
        others = {key_of(t) for n in walk(method) if isinstance(n, ast.Assign) and not (isinstance(n.value, ast.Call)
                  and key_of(n.value.func) in ("cls", cls.name)) for t in n.targets}
        return bool(returns) and all(key_of(r) in built - others for r in returns) \
            and not any(method_name(n) in ("eval", "train") for n in walk(method))

    def has_mode_layers(self, key: str | None) -> bool:
        """Whether the model under ``key`` has Dropout or BatchNorm (its train/eval mode matters); False when unknown."""
        role = self.role(key)
        if role is None or role.kind != "model" or role.node is None:
            return False
        if "home" in role.info:  # a module class of another file of the checked tree
            return role.info["home"]._class_has_mode_layers(role.cls, frozenset())
        if role.cls in self.classes:
            return self._class_has_mode_layers(role.cls, frozenset())
        if role.cls == "from_pretrained" and isinstance(role.node, ast.Call) and isinstance(role.node.func, ast.Attribute):
            owner = key_of(role.node.func.value)  # `GPT.from_pretrained(...)` of a module class of the tree: read that class
            if owner in self.classes:
                return self._class_has_mode_layers(owner, frozenset())
            project = getattr(self, "project", None)
            found = project.module_class(self, role.node.func.value) if project is not None else None
            if found is not None:
                return found[0]._class_has_mode_layers(found[1], frozenset())
        if role.cls in ("from_pretrained", TORCHVISION_BY_NAME) or (self.call_name(role.node) or "").startswith("torchvision.models"):
            return True  # torchvision's classification models are built with BatchNorm or Dropout
        if role.cls == "create_model" and isinstance(role.node, ast.Call):
            return _timm_has_batch_norm(role.node)
        return self.built_with_mode_layers(role.node)

    def built_with_mode_layers(self, node: ast.AST) -> bool:
        """Whether a constructor expression names Dropout or BatchNorm, itself or through a local module class."""
        memo = self.__dict__.setdefault("_built_with_mode_layers", {})  # asked per model and per rule: unparsed once
        found = memo.get(node)
        if found is None:
            found = memo[node] = bool(_MODE_LAYERS.search(ast.unparse(node))) or any(
                isinstance(n, ast.Call) and key_of(n.func) in self.classes and self._class_has_mode_layers(key_of(n.func), frozenset())
                for n in walk(node))
        return found

    def _class_has_mode_layers(self, name: str, seen: frozenset[str]) -> bool:
        if seen:
            return self._mode_layers_in_class(name, seen)
        memo = self.__dict__.setdefault("_classes_with_mode_layers", {})  # asked per model key and constructor: unparsed once
        if name not in memo:
            memo[name] = self._mode_layers_in_class(name, seen)
        return memo[name]

    def _mode_layers_in_class(self, name: str, seen: frozenset[str]) -> bool:
        cls = self.classes.get(name)
        if cls is None or name in seen:
            return False
        written = "\n".join(self.lines[cls.lineno - 1:cls.end_lineno])
        if _MODE_LAYERS.search(written) and _MODE_LAYERS.search(_mode_text(cls, written)):  # most classes name none
            return True
        calls = [n for n in walk(cls) if isinstance(n, ast.Call)]
        used = {key_of(n.func) for n in calls} | {key_of(b) for b in cls.bases}
        if any(u in self.classes and self._class_has_mode_layers(u, seen | {name}) for u in used if u):
            return True
        project = getattr(self, "project", None)
        for node in [*(c.func for c in calls), *cls.bases]:
            qual = self.qualname(node) or ""
            if qual.startswith("torchvision.models.") or (qual.startswith("transformers.") and qual.endswith(".from_pretrained")):
                return True  # a pretrained backbone inside (``self.backbone = resnet50()``)
            if qual == "timm.create_model" and isinstance(node, ast.expr) and any(c.func is node and _timm_has_batch_norm(c) for c in calls):
                return True
            found = project.module_class(self, node) if project is not None and key_of(node) not in self.classes and qual else None
            if found is not None and found[0]._class_has_mode_layers(found[1], frozenset()):
                return True  # a block class of another file of the tree (``from layers import Block``)
        return False


def _mode_text(cls: ast.ClassDef, written: str) -> str:
    """The class's code as the mode-layer search reads it: without docstrings, and without what a ``dropout`` (or
    ``batch_norm``...) parameter whose default is off (0, None, False) decides, since the default builds no such layer
    (``def __init__(self, ..., dropout=0.0)``, ``nn.Dropout(dropout) if dropout > 0 else None``, ``if self.dropout:``,
    ``super().__init__(dropout=dropout)``, opacus' DPLSTM). A class whose every mention is of that kind has none."""
    off: set[str] = set()
    for fn in (n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        args = fn.args.posonlyargs + fn.args.args
        pairs = list(zip(args[len(args) - len(fn.args.defaults):], fn.args.defaults)) + [
            (a, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None]
        off |= {a.arg for a, d in pairs if _MODE_LAYERS.search(a.arg) and isinstance(d, ast.Constant) and not d.value}
    if not off:
        return ast.unparse(cls)
    off |= {f"self.{a}" for a in off}

    def reads_off(node: ast.AST) -> bool:
        return any(isinstance(n, (ast.Name, ast.Attribute)) and key_of(n) in off for n in walk(node))

    class Strip(ast.NodeTransformer):
        def visit_arg(self, node: ast.arg) -> ast.AST | None:
            return None if node.arg in off else node

        def visit_arguments(self, node: ast.arguments) -> ast.arguments:
            node.defaults = [d for d in node.defaults if not (isinstance(d, ast.Constant) and not d.value)] if any(
                a.arg in off for a in node.posonlyargs + node.args) else node.defaults
            node.kw_defaults = [d for a, d in zip(node.kwonlyargs, node.kw_defaults) if a.arg not in off]
            self.generic_visit(node)
            return node

        def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
            return None if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) else self.generic_visit(node)

        def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt] | None:
            if reads_off(node.test):
                return [self.visit(s) for s in node.orelse] or None  # type: ignore[misc]
            return self.generic_visit(node)

        def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
            return self.visit(node.orelse) if reads_off(node.test) else self.generic_visit(node)

        def visit_Assign(self, node: ast.Assign) -> ast.AST | None:
            self.generic_visit(node)
            value = node.value
            return None if reads_off(value) or isinstance(value, ast.Constant) and value.value is None else node

        def visit_keyword(self, node: ast.keyword) -> ast.AST | None:
            return None if key_of(node.value) in off else self.generic_visit(node)

    try:  # a fresh tree to rewrite: parsing the class's own text costs a fraction of a deep copy
        fresh = ast.parse(textwrap.dedent(written)).body[0]
    except (SyntaxError, IndexError):  # a line indented less than the class (a multi-line string)
        fresh = copy.deepcopy(cls)
    stripped = Strip().visit(fresh)
    return ast.unparse(ast.fix_missing_locations(stripped))


# timm families built of BatchNorm layers whatever their arguments (ViTs and ConvNeXts are not: LayerNorm, no dropout)
_TIMM_BATCH_NORM = re.compile(r"(?:se|ecaresnet|seresnext|wide_)?res(?:net|next)|efficientnet|mobilenet|densenet|regnet|"
                              r"vgg\d+_bn|inception|xception|dla|dpn|cspresnet|cspdarknet|darknet|hrnet|ghostnet|mnasnet")


def _timm_has_batch_norm(call: ast.Call) -> bool:
    """Whether ``timm.create_model("resnet50", ...)`` names a family built of BatchNorm layers (train/eval matters)."""
    name = call.args[0] if call.args else kwarg(call, "model_name")
    return isinstance(name, ast.Constant) and isinstance(name.value, str) and _TIMM_BATCH_NORM.match(name.value.split(".")[0]) is not None


def _loop_pairs(target: ast.expr, iterable: ast.expr) -> list[tuple[ast.expr, ast.expr]]:
    """(loop variable, the iterable its values come from): ``for a, b in zip(A, B)`` -> (a, A), (b, B); ``for i, a in
    enumerate(A)`` -> (a, A); ``for a in A`` -> (a, A)."""
    name = (key_of(iterable.func) or "").rsplit(".", 1)[-1] if isinstance(iterable, ast.Call) else ""
    if name == "enumerate" and iterable.args and isinstance(target, ast.Tuple) and len(target.elts) == 2:  # type: ignore[union-attr]
        return _loop_pairs(target.elts[1], iterable.args[0])  # type: ignore[union-attr]
    if name == "zip" and isinstance(target, ast.Tuple) and len(target.elts) == len(iterable.args):  # type: ignore[union-attr]
        return [pair for t, i in zip(target.elts, iterable.args) for pair in _loop_pairs(t, i)]  # type: ignore[union-attr]
    if name in ("tqdm", "iter", "list", "tuple") and iterable.args:  # type: ignore[union-attr]
        return _loop_pairs(target, iterable.args[0])  # type: ignore[union-attr]
    return [(target, iterable)] if not isinstance(target, (ast.Tuple, ast.List)) else []


def _built_by(home: Any, cls: str, init: Any, depth: int = 3) -> list[Any]:
    """``__init__`` and the methods of the same class it calls on ``self`` (``self.build_model()``), transitively: the
    code that runs when the instance is built, so the attributes it assigns are set on every instance."""
    methods = home.methods.get(cls, {})
    found, todo = [init], [init]
    while todo and depth > 0:
        depth -= 1
        nxt = []
        for fn in todo:
            for node in walk(fn):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and key_of(node.func.value) == "self":
                    callee = methods.get(node.func.attr)
                    if callee is not None and callee not in found:
                        found.append(callee)
                        nxt.append(callee)
        todo = nxt
    return found


# a name that says optimizer: optimizer, optim, opt, optimizer_G, d_optim, opt_disc (not options, adopt)
_OPTIMIZER_NAME = re.compile(r"(?i)(^|_)(opt|optim|optimi[sz]er)(_|$)|^optimi[sz]er|optimi[sz]er$")


def _receivers(node: ast.expr) -> set[str | None]:
    """The keys a method is called on: ``trunk`` for ``trunk.append``, both for ``(head if h else trunk).append``."""
    if isinstance(node, ast.IfExp):
        return _receivers(node.body) | _receivers(node.orelse)
    return {key_of(node)}
