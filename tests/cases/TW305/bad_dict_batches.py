"""TW305: dict batches; labels padded with 0 while NLLLoss is told to ignore -1."""
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader


def pad_batch(items):
    return {
        "input": pad_sequence([it["input"] for it in items], batch_first=True),
        "labels": pad_sequence([it["labels"] for it in items], batch_first=True, padding_value=0),
    }


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(30, 8)
        self.proj = nn.Linear(8, 3)

    def forward(self, x):
        return torch.log_softmax(self.proj(self.embed(x)), dim=-1)


torch.manual_seed(0)
items = [{"input": torch.randint(1, 30, (n,)), "labels": torch.randint(1, 3, (n,))} for n in (4, 8, 2, 6, 5, 9)]
loader = DataLoader(items, batch_size=3, shuffle=True, collate_fn=pad_batch)
model = Tagger()
criterion = nn.NLLLoss(ignore_index=-1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for batch in loader:
        log_probs = model(batch["input"])
        loss = criterion(log_probs.flatten(0, 1), batch["labels"].flatten())  # error: TW305
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
