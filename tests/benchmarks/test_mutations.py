"""benchmarks/mutations.py: every operator makes its mistake in a small training script, and `check` reports it."""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from mutation_script import Script  # noqa: E402
from mutations import OPERATORS, check  # noqa: E402
from trainwell.catalog import CATALOG  # noqa: E402

CLASSIFIER = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x.flatten(1)))))


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
train_transform = transforms.Compose([transforms.RandomHorizontalFlip(), transforms.ToTensor()])
test_transform = transforms.Compose([transforms.ToTensor()])
train_set = datasets.MNIST("data", train=True, download=True, transform=train_transform)
test_set = datasets.MNIST("data", train=False, transform=test_transform)
train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True)
test_loader = torch.utils.data.DataLoader(test_set, batch_size=64)
model = Net().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
criterion = nn.CrossEntropyLoss()
start = 0
if start:
    checkpoint = torch.load("last.pt", weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])


def train(epoch):
    model.train()
    running = 0.0
    for inputs, targets in train_loader:
        inputs = inputs.to(device)
        targets = targets.to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        running += loss.item()
    return running


def test():
    model.eval()
    total = 0.0
    with torch.no_grad():
        for inputs, targets in test_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            total += criterion(model(inputs), targets).item() * inputs.size(0)
    return total / len(test_loader.dataset)


@torch.no_grad()
def predict(batch):
    return model(batch.to(device)).argmax(1)


for epoch in range(20):
    train(epoch)
    test()
    scheduler.step()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, "last.pt")
model.eval()
print(predict(next(iter(test_loader))[0]))
'''

# AMP with gradient accumulation under DDP, a seeded split that a resumed run recomputes
DISTRIBUTED = '''\
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset, random_split


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    data = TensorDataset(torch.randn(1000, 16), torch.randint(0, 4, (1000,)))
    train_set, val_set = random_split(data, [900, 100], generator=torch.Generator().manual_seed(0))
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)).cuda(rank)
    model = DDP(model, device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.load_state_dict(torch.load("ddp.pt", weights_only=True))
    scaler = torch.cuda.amp.GradScaler()
    criterion = nn.CrossEntropyLoss()
    accumulation = 4
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            x, y = x.cuda(rank), y.cuda(rank)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(x), y)
                loss = loss / accumulation
            scaler.scale(loss).backward()
            if (step + 1) % accumulation == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()


if __name__ == "__main__":
    main()
'''

# a log-probability classifier with NLLLoss over padded sequences, and a regression head squeezed for MSELoss
SEQUENCES = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence

PAD = 0


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 32, padding_idx=PAD)
        self.out = nn.Linear(32, 10)

    def forward(self, tokens):
        return F.log_softmax(self.out(self.embed(tokens)), dim=-1)


model = Tagger()
head = nn.Linear(8, 1)
optimizer = torch.optim.Adam(list(model.parameters()) + list(head.parameters()))
nll = nn.NLLLoss(ignore_index=PAD)
mse = nn.MSELoss()
for epoch in range(5):
    for i in range(100):
        tokens = pad_sequence([torch.randint(1, 100, (n,)) for n in (5, 7, 3)], batch_first=True, padding_value=PAD)
        tags = pad_sequence([torch.randint(1, 10, (n,)) for n in (5, 7, 3)], batch_first=True, padding_value=PAD)
        features, target = torch.randn(16, 8), torch.randn(16)
        optimizer.zero_grad()
        loss = nll(model(tokens).view(-1, 10), tags.view(-1)) + mse(head(features).squeeze(1), target)
        loss.backward()
        optimizer.step()
'''
# mixed precision, no clipping yet
AMP = '''\
import torch
import torch.nn as nn

model = nn.Linear(8, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler()
criterion = nn.BCEWithLogitsLoss()
for step in range(100):
    x, y = torch.randn(4, 8).cuda(), torch.rand(4, 2).cuda()
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
'''
# a least-squares GAN: the discriminator's [N, 1] validity against [N, 1] ground truths
GAN = '''\
import torch
import torch.nn as nn
from torchvision import datasets, transforms


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(16, 784), nn.Tanh())

    def forward(self, z):
        return self.model(z).view(z.size(0), 1, 28, 28)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, 2, 1), nn.LeakyReLU(0.2))
        self.adv_layer = nn.Linear(8 * 14 * 14, 1)

    def forward(self, img):
        out = self.features(img)
        out = out.view(out.shape[0], -1)
        return self.adv_layer(out)


generator = Generator()
discriminator = Discriminator()
adversarial_loss = nn.MSELoss()
optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4)
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
batch = 64
dataloader = torch.utils.data.DataLoader(datasets.MNIST("data", download=True, transform=transforms.ToTensor()),
                                         batch_size=batch, shuffle=True)
for epoch in range(5):
    for imgs, _ in dataloader:
        valid = torch.ones(imgs.size(0), 1)
        optimizer_G.zero_grad()
        gen_imgs = generator(torch.randn(imgs.size(0), 16))
        g_loss = adversarial_loss(discriminator(gen_imgs), valid)
        g_loss.backward()
        optimizer_G.step()
        optimizer_D.zero_grad()
        d_loss = adversarial_loss(discriminator(imgs), valid)
        d_loss.backward()
        optimizer_D.step()
'''
# checker gaps these operators expose (benchmarks/mutations.py lists them with the real files): expected to fail until fixed
KNOWN_GAPS = {
}
FIXTURES = {"classifier.py": CLASSIFIER, "distributed.py": DISTRIBUTED, "sequences.py": SEQUENCES, "amp.py": AMP, "gan.py": GAN}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    for name, text in FIXTURES.items():
        (root / name).write_text(text)
    return root


def _mutants(operator: str) -> list[tuple[str, object]]:
    _, make = OPERATORS[operator]
    return [(name, m) for name, text in FIXTURES.items() for m in make(Script(text)) if m is not None]


@pytest.mark.parametrize("operator", [pytest.param(o, marks=pytest.mark.xfail(reason=KNOWN_GAPS[o], strict=True))
                                      if o in KNOWN_GAPS else o for o in sorted(OPERATORS)])
def test_operator_makes_its_mistake_and_check_reports_it(operator: str, project: Path) -> None:
    code, _ = OPERATORS[operator]
    made = _mutants(operator)
    assert made, f"{operator}: no mutant of the fixtures"
    name, mutant = made[0]
    assert mutant.code == code and mutant.source != FIXTURES[name]
    ast.parse(mutant.source)
    if code not in CATALOG:
        pytest.skip(f"{code}: no static rule in this trainwell yet")
    codes = {code}
    before = Counter(f.code for f in check(project / name, FIXTURES[name], project, codes, (2, 4)))
    after = Counter(f.code for f in check(project / name, mutant.source, project, codes, (2, 4)))
    assert after[code] > before[code], f"{operator}: {code} not reported on the mutant of {name} at line {mutant.line}"


def test_a_clip_whose_norm_is_kept_is_a_clip(project: Path) -> None:
    """`grad_norm = clip_grad_norm_(...)` (Swin-Transformer's form) is the clip the TW104 operators move and delete."""
    source = DISTRIBUTED.replace("                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
                                 "                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)")
    _, make = OPERATORS["delete-unscale"]
    made = [m for m in make(Script(source)) if m is not None]
    assert len(made) == 1 and "unscale_" not in made[0].source and "grad_norm = " in made[0].source
    after = Counter(f.code for f in check(project / "distributed.py", made[0].source, project, {"TW104"}, (2, 4)))
    assert after["TW104"] == 1
