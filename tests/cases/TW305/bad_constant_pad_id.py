# case: static-only
"""TW305: the vocabulary's PAD_IDX pads the targets, and the criterion is told to ignore a different constant."""
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

PAD_IDX = 1
IGNORE = -1


def collate(batch):
    src = pad_sequence([b[0] for b in batch], padding_value=PAD_IDX)
    tgt = pad_sequence([b[1] for b in batch], padding_value=PAD_IDX)
    return src, tgt


pairs = [(torch.randint(2, 30, (n,)), torch.randint(2, 30, (n,))) for n in (4, 7, 5, 9)]
loader = DataLoader(pairs, batch_size=2, shuffle=True, collate_fn=collate)
model = nn.Sequential(nn.Embedding(30, 16, padding_idx=PAD_IDX), nn.Linear(16, 30))
criterion = nn.CrossEntropyLoss(ignore_index=IGNORE)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(2):
    for src, tgt in loader:
        out = model(src)
        loss = criterion(out.reshape(-1, out.shape[-1]), tgt.reshape(-1))  # error: TW305
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
