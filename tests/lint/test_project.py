"""The project index: helpers of other files of the checked tree are walked like local ones."""

from __future__ import annotations

import textwrap
from pathlib import Path

from trainwell.lint.runner import run

ENGINE = '''
import torch


def train_one_epoch(model, loader, updater):
    model.train()
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        updater.step()


def accuracy(logits, y):
    return (logits.argmax(1) == y).float().mean().item()
'''

MAIN = '''
import torch
from torch import nn
from engine import train_one_epoch, accuracy

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 4), torch.randint(0, 2, (4,)))]
total = 0.0
for epoch in range(3):
    train_one_epoch(model, data, optimizer)
    for x, y in data:
        total += accuracy(model(x), y)
'''


def _tree(tmp_path: Path, engine: str = ENGINE, main: str = MAIN) -> Path:
    (tmp_path / "engine.py").write_text(textwrap.dedent(engine))
    (tmp_path / "main.py").write_text(textwrap.dedent(main))
    return tmp_path


def test_a_bug_in_a_helper_of_another_file_is_reported_there(tmp_path):
    root = _tree(tmp_path)
    findings = [f for f in run([root]).findings if f.code == "TW101"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("engine.py", 9)]


def test_the_helper_alone_proves_nothing(tmp_path):
    """Its `updater` may be anything (DeepSpeed's engine clears the gradients in its own `step()`): the caller's
    optimizer is what proves the bug."""
    root = _tree(tmp_path)
    assert [f.code for f in run([root / "engine.py"]).findings] == []


def test_a_helper_whose_stepped_parameter_is_named_optimizer_is_read_alone(tmp_path):
    root = _tree(tmp_path, engine=ENGINE.replace("updater", "optimizer"))
    assert [(f.code, f.line) for f in run([root / "engine.py"]).findings] == [("TW101", 9)]


def test_a_number_returned_by_a_helper_of_another_file_is_not_a_kept_graph(tmp_path):
    root = _tree(tmp_path)
    assert not [f for f in run([root]).findings if f.code == "TW204"]


def test_a_tensor_returned_by_a_helper_of_another_file_is_a_kept_graph(tmp_path):
    root = _tree(tmp_path, engine=ENGINE.replace(".float().mean().item()", " * 1.0 + logits.sum()"))
    findings = [f for f in run([root]).findings if f.code == "TW204"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("main.py", 13)]


def test_a_package_helper_resolves_through_a_relative_import(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "engine.py").write_text(textwrap.dedent(ENGINE))
    (package / "main.py").write_text(textwrap.dedent(MAIN).replace("from engine import", "from .engine import"))
    findings = [f for f in run([tmp_path]).findings if f.code == "TW101"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("engine.py", 9)]



UTILS = '''
import torch


def save_checkpoint(epoch, model, optimizer):
    torch.save({"epoch": epoch, "model": model, "optimizer": optimizer.state_dict()}, "checkpoint.pth")
'''

STAR_MAIN = '''
import torch
from torch import nn
from utils import *

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 4), torch.randint(0, 2, (4,)))]
for epoch in range(3):
    for x, y in data:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        print(model(data[0][0]).argmax(1))
    save_checkpoint(epoch, model, optimizer)
'''


def test_a_helper_brought_in_by_a_star_import_is_read_there(tmp_path):
    """`from utils import *`: `save_checkpoint(epoch, model, optimizer)` only saves, so the eval mode that validation left
    carries into the next epoch's training (TW201); a helper that cannot be read would leave the mode unknown."""
    (tmp_path / "utils.py").write_text(textwrap.dedent(UTILS))
    (tmp_path / "main.py").write_text(textwrap.dedent(STAR_MAIN))
    findings = [f for f in run([tmp_path]).findings if f.code == "TW201"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("main.py", 14)]
    (tmp_path / "utils.py").write_text(textwrap.dedent(UTILS).replace("    torch.save(", "    model.train()\n    torch.save("))
    assert not [f for f in run([tmp_path]).findings if f.code == "TW201"]


STEP = '''
import torch


def train_step(model, x, y, optimizer):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
'''

STEP_MAIN = '''
import torch
from torch import nn
from engine import train_step

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 4), torch.randint(0, 2, (4,)))]
for epoch in range(3):
    for x, y in data:
        train_step(model, x, y, optimizer)
'''


def test_a_per_batch_step_helper_of_another_file_is_walked_from_the_loop(tmp_path):
    root = _tree(tmp_path, engine=STEP, main=STEP_MAIN)
    findings = [f for f in run([root]).findings if f.code == "TW101"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("engine.py", 7)]


def test_a_per_batch_step_helper_that_clears_gradients_is_clean(tmp_path):
    root = _tree(tmp_path, engine=STEP.replace("    loss.backward()", "    optimizer.zero_grad()\n    loss.backward()"), main=STEP_MAIN)
    assert run([root]).findings == []


def _lib_tree(tmp_path: Path, insert: str) -> Path:
    (tmp_path / "lib" / "core").mkdir(parents=True)
    (tmp_path / "lib" / "core" / "__init__.py").write_text("")
    (tmp_path / "lib" / "core" / "function.py").write_text(textwrap.dedent(ENGINE).replace("def train_one_epoch", "def train"))
    main = textwrap.dedent(MAIN).replace("from engine import train_one_epoch, accuracy", f"import sys\n{insert}\nfrom core.function import train")
    (tmp_path / "main.py").write_text(main.replace("train_one_epoch(", "train(").replace("total += accuracy(model(x), y)", "pass"))
    return tmp_path


def test_an_import_after_a_sys_path_edit_resolves_in_that_folder(tmp_path):
    root = _lib_tree(tmp_path, 'sys.path.insert(0, "lib")')
    findings = [f for f in run([root]).findings if f.code == "TW101"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("function.py", 9)]


def test_a_sys_path_edit_built_from_the_file_s_folder_resolves_too(tmp_path):
    root = _lib_tree(tmp_path, 'import os\nsys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))')
    assert [f.code for f in run([root]).findings] == ["TW101"]


def test_without_the_sys_path_edit_the_import_stays_unknown(tmp_path):
    root = _lib_tree(tmp_path, "")
    assert run([root]).findings == []


def test_a_script_named_alone_still_reads_the_modules_beside_it(tmp_path):
    """`trainwell check main.py`: `from engine import ...` resolves to engine.py next to it, as Python would."""
    root = _tree(tmp_path)
    findings = [f for f in run([root / "main.py"]).findings if f.code == "TW101"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("engine.py", 9)]


def test_a_module_inside_a_virtualenv_is_not_read_as_a_sibling(tmp_path):
    root = _tree(tmp_path)
    (root / "engine.py").unlink()
    packages = root / "venv" / "lib"
    packages.mkdir(parents=True)
    (packages / "engine.py").write_text(textwrap.dedent(ENGINE))
    main = root / "main.py"
    main.write_text("import sys\nsys.path.insert(0, 'venv/lib')\n" + textwrap.dedent(MAIN))
    assert [f.code for f in run([main]).findings if f.code == "TW101"] == []


def test_a_helper_re_exported_by_a_package_resolves_to_its_module(tmp_path):
    """``from utils import train_one_epoch`` where ``utils/__init__.py`` says ``from .engine import (...)``."""
    package = tmp_path / "utils"
    package.mkdir()
    (package / "__init__.py").write_text("from .engine import (\n    accuracy,\n    train_one_epoch,\n)\n")
    (package / "engine.py").write_text(textwrap.dedent(ENGINE))
    (tmp_path / "main.py").write_text(textwrap.dedent(MAIN).replace("from engine import", "from utils import"))
    findings = [f for f in run([tmp_path]).findings if f.code == "TW101"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("engine.py", 9)]


def test_the_index_reads_a_text_given_for_a_file_instead_of_the_disk(tmp_path):
    """A mutated (or unsaved) helper is what the importer's walk sees."""
    from trainwell.lint.index import ProjectIndex
    from trainwell.lint.runner import check_source

    root = _tree(tmp_path, engine=ENGINE.replace("    for x, y in loader:\n", "    for x, y in loader:\n        optimizer.zero_grad()\n"))
    main = root / "main.py"
    files = [root / "engine.py", main]
    clean = ProjectIndex(files, [root], (2, 4))
    assert not [f for f in check_source(main.read_text(), str(main), {"TW101"}, project=clean)[0]]
    mutated = ProjectIndex(files, [root], (2, 4), texts={root / "engine.py": textwrap.dedent(ENGINE)})
    findings = check_source(main.read_text(), str(main), {"TW101"}, project=mutated)[0]
    assert [(Path(f.path).name, f.line) for f in findings] == [("engine.py", 9)]


TRAINER = '''
import torch
from torch.utils.tensorboard import SummaryWriter


class Trainer:
    def __init__(self, model, optimizer, loader):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.writer = SummaryWriter()

    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        self.writer.add_scalar("loss", loss.item())

    def fit(self, epochs):
        for epoch in range(epochs):
            for x, y in self.loader:
                self.step(x, y)
'''

TRAINER_MAIN = '''
import torch
from torch import nn
from trainer import Trainer

model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(16, 8), torch.randn(16, 1)) for _ in range(10)]
trainer = Trainer(model, optimizer, data)
trainer.fit(3)
'''


def test_a_trainer_class_of_another_file_is_walked_with_the_objects_it_was_built_with(tmp_path):
    """``trainer = Trainer(model, optimizer, data); trainer.fit(3)``: ``self.optimizer`` in trainer.py is the SGD of
    main.py, and a writer built from nothing cannot clear its gradients."""
    (tmp_path / "trainer.py").write_text(textwrap.dedent(TRAINER))
    (tmp_path / "main.py").write_text(textwrap.dedent(TRAINER_MAIN))
    findings = [f for f in run([tmp_path]).findings if f.code == "TW101"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("trainer.py", 15)]
    assert "`self.optimizer` is never cleared" in findings[0].message
    assert [f.code for f in run([tmp_path / "trainer.py"]).findings] == []


def test_a_trainer_class_of_another_file_that_clears_is_clean(tmp_path):
    (tmp_path / "trainer.py").write_text(textwrap.dedent(TRAINER).replace("        loss.backward()\n", "        self.optimizer.zero_grad()\n        loss.backward()\n"))
    (tmp_path / "main.py").write_text(textwrap.dedent(TRAINER_MAIN))
    assert [f.code for f in run([tmp_path]).findings] == []


SCHEDULED = '''
class ScheduledOptim:
    def __init__(self, optimizer, warmup):
        self._optimizer = optimizer
        self.warmup = warmup
        self.steps = 0

    def step_and_update_lr(self):
        self.steps += 1
        for group in self._optimizer.param_groups:
            group["lr"] = min(1.0, self.steps / self.warmup)
        self._optimizer.step()

    def zero_grad(self):
        self._optimizer.zero_grad()
'''

SCHEDULED_MAIN = '''
import torch
from torch import nn
from optim import ScheduledOptim

model = nn.Linear(8, 1)
optimizer = ScheduledOptim(torch.optim.Adam(model.parameters(), betas=(0.9, 0.98)), 4000)
data = [(torch.randn(16, 8), torch.randn(16, 1)) for _ in range(10)]
for epoch in range(3):
    for x, y in data:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step_and_update_lr()
'''


def test_an_optimizer_wrapper_of_another_file_clears_what_it_steps(tmp_path):
    """``optimizer.zero_grad()`` of a wrapper class runs the wrapper's own method, which clears the optimizer it
    steps; without that call the loop accumulates."""
    (tmp_path / "optim.py").write_text(textwrap.dedent(SCHEDULED))
    (tmp_path / "main.py").write_text(textwrap.dedent(SCHEDULED_MAIN))
    assert [f.code for f in run([tmp_path]).findings if f.code in ("TW101", "TW102")] == []
    (tmp_path / "main.py").write_text(textwrap.dedent(SCHEDULED_MAIN).replace("        optimizer.zero_grad()\n", ""))
    findings = [f for f in run([tmp_path]).findings if f.code == "TW101"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("main.py", 12)]
    assert "at line 12 of optim.py" in findings[0].message


def test_a_script_named_alone_reads_a_folder_it_puts_on_sys_path(tmp_path):
    """`trainwell check main.py` with `sys.path.insert(0, "lib")`: `from core.function import train` is lib's."""
    root = _lib_tree(tmp_path, 'sys.path.insert(0, "lib")')
    findings = [f for f in run([root / "main.py"]).findings if f.code == "TW101"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("function.py", 9)]


def test_a_sys_path_edit_made_by_an_imported_init_paths_module_resolves(tmp_path):
    """`import _init_paths` whose `add_path(osp.join(this_dir, "..", "lib"))` puts lib on sys.path (HRNet's layout)."""
    root = _lib_tree(tmp_path, "import _init_paths")
    (root / "tools").mkdir()
    (root / "main.py").rename(root / "tools" / "train.py")
    (root / "tools" / "_init_paths.py").write_text(textwrap.dedent('''
        import os.path as osp
        import sys


        def add_path(path):
            if path not in sys.path:
                sys.path.insert(0, path)


        this_dir = osp.dirname(__file__)
        add_path(osp.join(this_dir, "..", "lib"))
    '''))
    findings = [f for f in run([root]).findings if f.code == "TW101"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("function.py", 9)]


SOLVER = '''
import torch
from torch import nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))

    def forward(self, x):
        return self.net(x)


class Solver:
    def __init__(self, loader, lr):
        self.loader = loader
        self.lr = lr
        self.build_model()

    def build_model(self):
        self.G = Generator()
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), self.lr)

    def train(self, epochs):
        for epoch in range(epochs):
            for x, y in self.loader:
                loss = nn.functional.mse_loss(self.G(x), y)
                self.g_optimizer.zero_grad()
                loss.backward()
                self.g_optimizer.step()

    def test(self):
        fakes = []
        for x, _ in self.loader:
            fakes.append(self.G(x).data.cpu())
        torch.save(torch.cat(fakes), "fakes.pt")
'''

SOLVER_MAIN = '''
import sys

import torch
from solver import Solver


def main(mode):
    data = torch.utils.data.TensorDataset(torch.randn(32, 8), torch.randn(32, 8))
    solver = Solver(torch.utils.data.DataLoader(data, batch_size=8, shuffle=True), 1e-3)
    if mode == "train":
        solver.train(2)
    elif mode == "test":
        solver.test()


if __name__ == "__main__":
    main(sys.argv[1])
'''


def test_a_method_of_another_file_s_class_runs_with_the_caller_s_autograd(tmp_path):
    """`Solver.test()` alone could be called under no_grad; main.py calls it with autograd on, and `self.G` is the
    generator that `build_model()` (called by `__init__`) builds and `train()` trains (stargan's solver.py)."""
    root = _tree(tmp_path, engine=SOLVER, main=SOLVER_MAIN)
    (root / "engine.py").rename(root / "solver.py")
    findings = [f for f in run([root]).findings if f.code == "TW203"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("solver.py", 36)]


def test_a_method_of_another_file_s_class_called_under_no_grad_is_clean(tmp_path):
    root = _tree(tmp_path, engine=SOLVER, main=SOLVER_MAIN.replace(
        "        solver.test()", "        with torch.no_grad():\n            solver.test()"))
    (root / "engine.py").rename(root / "solver.py")
    assert [f for f in run([root]).findings if f.code == "TW203"] == []


def test_a_loader_returned_by_a_name_the_imported_module_does_not_define_is_unknown_not_an_error(tmp_path):
    """TW305 follows a loader unpacked from another module's helper; a name that module binds without a `def`
    (made by a factory here) is unknown: the file is checked without an internal error."""
    (tmp_path / "helpers.py").write_text("def _factory():\n    return lambda size: ([], [])\n\n\nload_data = _factory()\n")
    (tmp_path / "main.py").write_text(textwrap.dedent('''
        import torch
        import torch.nn.functional as F
        from torch import nn
        import helpers

        model = nn.Sequential(nn.Conv2d(1, 4, 5, padding=2), nn.Flatten(), nn.LazyLinear(10))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        train_iter, test_iter = helpers.load_data(32)
        for X, y in train_iter:
            loss = F.cross_entropy(model(X), y.view(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    '''))
    result = run([tmp_path])
    assert result.problems == [] and result.findings == []


SEEDLESS_MAIN = '''
import torch
from torch import nn
import config

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=config.LR)
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
for epoch in range(config.EPOCHS):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
'''


def test_a_config_module_that_only_holds_a_seed_value_seeds_nothing(tmp_path):
    """TW504 stays silent when an imported module of the project may seed; a module that only holds a seed value
    (`seed = 0`, read nowhere here) calls no seeder, so the unseeded program is reported."""
    (tmp_path / "config.py").write_text("seed = 0  # the seed of a run\nLR = 0.1\nEPOCHS = 3\n")
    (tmp_path / "main.py").write_text(textwrap.dedent(SEEDLESS_MAIN))
    assert [(Path(f.path).name, f.code) for f in run([tmp_path], select=["TW504"]).findings] == [("main.py", "TW504")]


def test_a_module_of_the_project_that_calls_a_seeder_may_seed_the_program(tmp_path):
    (tmp_path / "config.py").write_text(textwrap.dedent('''
        import torch

        SEED, LR, EPOCHS = 0, 0.1, 3
        torch.manual_seed(SEED)
    '''))
    (tmp_path / "main.py").write_text(textwrap.dedent(SEEDLESS_MAIN))
    assert run([tmp_path], select=["TW504"]).findings == []


def test_a_map_style_dataset_class_of_another_file_feeds_a_ddp_model_unsharded(tmp_path):
    """TW111 reads the dataset's class where the project defines it: a torchvision ImageFolder subclass is map-style."""
    (tmp_path / "multicrop.py").write_text(textwrap.dedent('''
        import torchvision.datasets as datasets


        class MultiCropDataset(datasets.ImageFolder):
            def __getitem__(self, index):
                image, _ = super().__getitem__(index)
                return [image, image]
    '''))
    (tmp_path / "main.py").write_text(textwrap.dedent('''
        import torch
        from torch import nn
        from multicrop import MultiCropDataset

        torch.distributed.init_process_group("nccl")
        loader = torch.utils.data.DataLoader(MultiCropDataset("data"), batch_size=32, shuffle=True)
        model = nn.parallel.DistributedDataParallel(nn.Linear(8, 8).cuda())
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(3):
            for views in loader:
                optimizer.zero_grad()
                model(views[0].cuda()).sum().backward()
                optimizer.step()
    '''))
    assert [(Path(f.path).name, f.code) for f in run([tmp_path]).findings if f.code == "TW111"] == [("main.py", "TW111")]


def test_a_checked_helper_is_parsed_once_for_the_script_that_imports_it(tmp_path, monkeypatch):
    """engine.py is checked first (file order), then main.py walks its `train_one_epoch`: the parse made for the
    check of engine.py serves the walk too."""
    import ast

    root = _tree(tmp_path)
    parsed, parse = [], ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, *a, **k: parsed.append(text) or parse(text, *a, **k))
    findings = [f for f in run([root]).findings if f.code == "TW101"]
    assert [(Path(f.path).name, f.line) for f in findings] == [("engine.py", 9)]
    assert sorted(text.count("def train_one_epoch") for text in parsed) == [0, 1]  # main.py, then engine.py once


def test_a_text_given_for_a_helper_the_index_parsed_from_disk_is_the_one_checked(tmp_path):
    """The index parsed engine.py from the disk for main.py; checking another text of engine.py (an editor's
    buffer, a mutated copy) reports that text's findings, not the disk's."""
    from trainwell.lint.index import ProjectIndex
    from trainwell.lint.runner import check_source, resolve_codes

    root = _tree(tmp_path)
    files = [root / "engine.py", root / "main.py"]
    index = ProjectIndex(files, [root], (2, 4))
    codes = resolve_codes(None, None)
    check_source((root / "main.py").read_text(), str(root / "main.py"), codes, project=index)
    assert index.parsed(root / "engine.py") is not None  # parsed as main.py's helper
    edited = (root / "engine.py").read_text() + "\nstate = torch.load('weights.pt')\n"
    findings, _ = check_source(edited, str(root / "engine.py"), codes, project=index)
    assert "TW502" in [f.code for f in findings]
