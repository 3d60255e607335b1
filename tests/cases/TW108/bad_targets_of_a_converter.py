"""TW108: the targets come from a label converter, one of two classes chosen by a flag, whose `encode` pads the
label ids into a new integer tensor; the country ids of a second step come from a helper that returns what another
helper returns. The loss reads the model's output detached."""
import torch
from torch import nn


class CTCConverter:
    def __init__(self, chars):
        self.index = {c: i + 1 for i, c in enumerate(chars)}

    def encode(self, labels, width=6):
        batch = torch.LongTensor(len(labels), width).fill_(0)
        for i, label in enumerate(labels):
            batch[i, :len(label)] = torch.LongTensor([self.index[c] for c in label])
        return batch, torch.IntTensor([len(label) for label in labels])


class AttnConverter:
    def __init__(self, chars):
        self.index = {c: i + 2 for i, c in enumerate(chars)}

    def encode(self, labels, width=6):
        batch = torch.LongTensor(len(labels), width + 1).fill_(0)
        for i, label in enumerate(labels):
            batch[i, 1:1 + len(label)] = torch.LongTensor([self.index[c] for c in label])
        return batch, torch.IntTensor([len(label) + 1 for label in labels])


def to_ids(names, table):
    return torch.LongTensor([table[n] for n in names])


def make_targets(names, table):
    return to_ids(names, table), len(names)


use_ctc = False
converter = CTCConverter("abc") if use_ctc else AttnConverter("abc")
torch.manual_seed(0)
model = nn.Linear(4, 5)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for labels in (["ab", "cab"], ["c", "abc"]):
    text, length = converter.encode(labels)
    target = text[:, 1]
    preds = model(torch.randn(len(labels), 4))
    cost = criterion(preds.detach(), target).requires_grad_()
    optimizer.zero_grad()
    cost.backward()  # error: TW108
    optimizer.step()

table = {"fr": 0, "de": 1, "it": 2}
for names in (["fr", "de"], ["it", "fr"]):
    target, count = make_targets(names, table)
    output = model(torch.randn(count, 4))[:, :3]
    loss = criterion(output.detach(), target).requires_grad_()
    optimizer.zero_grad()
    loss.backward()  # error: TW108
    optimizer.step()
print(loss.item())
