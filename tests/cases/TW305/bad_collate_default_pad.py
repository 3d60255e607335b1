"""TW305: the collate function pads the tag sequences with 0 (pad_sequence's default) and CrossEntropyLoss ignores -100."""
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

torch.manual_seed(0)
lengths = [3, 9, 4, 12, 5, 7, 2, 10]
samples = [(torch.randint(1, 50, (n,)), torch.randint(1, 5, (n,))) for n in lengths]


def collate(batch):
    tokens, tags = zip(*batch)
    return pad_sequence(tokens, batch_first=True), pad_sequence(tags, batch_first=True)


loader = DataLoader(samples, batch_size=4, shuffle=True, collate_fn=collate)
embed = nn.Embedding(50, 16, padding_idx=0)
head = nn.Linear(16, 5)
model = nn.Sequential(embed, head)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(3):
    for tokens, tags in loader:
        logits = model(tokens)
        loss = criterion(logits.view(-1, 5), tags.view(-1))  # error: TW305
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
