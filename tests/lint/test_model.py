"""The model of training code the rules stand on: roles through imports and aliases, scheduler kinds,
training loops found through helpers, and the ordered events of one iteration."""

from __future__ import annotations

import ast
import textwrap

from trainwell.lint import events as ev
from trainwell.lint.facts import CheckedFile
from trainwell.lint.syntax import key_of


def _ctx(source: str) -> CheckedFile:
    source = textwrap.dedent(source)
    return CheckedFile("t.py", source, ast.parse(source))


def test_roles_through_imports_aliases_attributes_and_arguments():
    ctx = _ctx("""
        import torch.optim as optim
        from torch import nn
        from torch.optim.lr_scheduler import StepLR as Step, OneCycleLR, CosineAnnealingLR
        from torch.utils.data import DataLoader

        class Net(nn.Module):
            pass

        class Trainer:
            def __init__(self, model, loader):
                self.model = model
                self.opt = optim.AdamW(model.parameters())
                self.per_epoch = Step(self.opt, step_size=30)
                self.per_step = OneCycleLR(self.opt, max_lr=1, total_steps=100)
                self.cos_epochs = CosineAnnealingLR(self.opt, T_max=num_epochs)
                self.cos_steps = CosineAnnealingLR(self.opt, T_max=len(loader) * 10)
                self.cos_bare = CosineAnnealingLR(self.opt, T_max=50)
                self.scaler = torch.amp.GradScaler(enabled=False)

        trainer = Trainer(Net(), DataLoader(ds, shuffle=True))
    """)
    kinds = {key: (role.kind, role.cls) for key, role in ctx.roles.items()}
    assert kinds["self.opt"] == ("optimizer", "AdamW")
    assert kinds["model"] == ("model", "Net") and ctx.roles["self.model"] is ctx.roles["model"]
    assert kinds["loader"] == ("loader", "DataLoader")
    per = {key: ctx.roles[key].info["per"] for key in ("self.per_epoch", "self.per_step", "self.cos_epochs", "self.cos_steps", "self.cos_bare")}
    assert per == {"self.per_epoch": "epoch", "self.per_step": "step", "self.cos_epochs": "epoch", "self.cos_steps": "step", "self.cos_bare": "unknown"}
    assert ctx.instances == {"trainer": "Trainer"}


def test_training_loop_found_through_two_helpers_and_its_event_order():
    ctx = _ctx("""
        import torch
        from torch import nn

        def compute(model, batch):
            return nn.functional.cross_entropy(model(batch["x"]), batch["y"])

        def step(model, opt, sched, scaler, batch):
            opt.zero_grad()
            with torch.autocast("cpu"):
                loss = compute(model, batch)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            sched.step()

        net = nn.Linear(2, 2)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1, total_steps=10)
        amp = torch.amp.GradScaler("cpu")
        for epoch in range(2):
            for i, batch in enumerate(tqdm(train_loader)):
                step(net, optimizer, schedule, amp, batch)
            net.eval()
            with torch.no_grad():
                net(val)
    """)
    analysis = ctx.analysis
    [frame] = analysis.step_frames
    assert frame.iter_key == "train_loader"
    order = [(e.kind, e.key) for e in frame.events if e.kind not in (ev.ASSIGN, ev.AUG, ev.APPEND, ev.SYNC, ev.ESCAPE)]
    assert order == [
        (ev.ZERO_GRAD, "optimizer"), (ev.FORWARD, "net"), (ev.LOSS, "nn.functional.cross_entropy"), (ev.BACKWARD, "amp"),
        (ev.UNSCALE, "optimizer"), (ev.CLIP, None), (ev.STEP, "optimizer"), (ev.SCHED_STEP, "schedule"),
    ]
    forwards = [e for e in analysis.events if e.kind == ev.FORWARD]
    assert [e.grad for e in forwards] == [True, False]
    assert any(isinstance(v, tuple) and v[0] == "eval" for v in forwards[0].mode)  # the previous epoch's eval() reaches the next forward


def test_accumulation_window_and_branches():
    ctx = _ctx("""
        import torch
        model = torch.nn.Linear(2, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i, (x, y) in enumerate(loader):
            loss = model(x).sum()
            loss.backward()
            if (i + 1) % k == 0:
                opt.step()
                opt.zero_grad()
            else:
                pass
    """)
    events = {e.kind: e for e in ctx.analysis.events}
    assert events[ev.STEP].periodic and not events[ev.BACKWARD].periodic
    assert events[ev.STEP].compatible(events[ev.ZERO_GRAD]) and events[ev.STEP].compatible(events[ev.BACKWARD])


def test_uncertain_roles_stay_silent():
    ctx = _ctx("""
        import torch
        for state in states:
            action = policy(state)
            env.step(action)
            thing.backward()
    """)
    assert not [e for e in ctx.analysis.events if e.kind in (ev.STEP, ev.SCHED_STEP, ev.FORWARD)]


def test_unit_tests_are_known_by_module_name_and_class():
    source = textwrap.dedent("""
        import unittest

        def test_forward(): pass
        def helper(): pass

        class TestModel:
            def test_step(self): pass
            def setup_method(self): pass

        class Checks(unittest.TestCase):
            def test_grad(self): pass
    """)
    tree = ast.parse(source)
    names = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}

    def tests(path: str) -> set[str]:
        ctx = CheckedFile(path, source, tree)
        return {name for name, fn in names.items() if ctx.is_test_function(fn)}

    assert tests("tests/test_model.py") == tests("model_test.py") == {"test_forward", "test_step", "test_grad"}
    assert tests("train.py") == {"test_grad"}  # `def test(model, loader)` of a script is its test-set evaluation


def test_peft_loads_adapters_frozen_unless_trainable():
    ctx = _ctx("""
        from peft import AutoPeftModelForCausalLM, PeftModel
        a = PeftModel.from_pretrained(base, path)
        b = PeftModel.from_pretrained(base, path, is_trainable=True)
        c = PeftModel.from_pretrained(base, path, "default", True)
        d = AutoPeftModelForCausalLM.from_pretrained(path, "default", True)
        e = AutoPeftModelForCausalLM.from_pretrained(path, is_trainable=flag)
        f = Net.from_pretrained(path)
    """)
    frozen = {key_of(a.targets[0]): ctx.loads_frozen(a.value) for a in ctx.assigns}
    assert frozen == {"a": True, "b": False, "c": False, "d": False, "e": True, "f": None}
