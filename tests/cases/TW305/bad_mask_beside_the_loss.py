"""TW305: the loss helper masks the padding of its targets for the label-smoothed branch (and the accuracy) with
`gold.ne(pad_idx)`, but its plain branch calls cross_entropy without ignore_index: every padding position is trained."""
import torch
import torch.nn.functional as F
from torch import nn

PAD = 0


def compute_loss(pred, gold, pad_idx, smoothing=False):
    gold = gold.contiguous().view(-1)
    if smoothing:
        log_probs = F.log_softmax(pred, dim=1)
        non_pad_mask = gold.ne(pad_idx)
        loss = -log_probs.gather(1, gold.unsqueeze(1)).squeeze(1).masked_select(non_pad_mask).sum()
    else:
        loss = F.cross_entropy(pred, gold, reduction="sum")  # error: TW305
    return loss


torch.manual_seed(0)
lengths = [3, 6, 8, 4, 5, 2, 8, 7]
batches = []
for start in range(0, len(lengths), 4):
    rows = torch.full((4, 8), PAD, dtype=torch.long)
    for row, n in enumerate(lengths[start:start + 4]):
        rows[row, :n] = torch.randint(1, 20, (n,))
    batches.append(rows)
model = nn.Sequential(nn.Embedding(20, 16, padding_idx=PAD), nn.Linear(16, 20))
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(2):
    for tokens in batches:
        pred = model(tokens[:, :-1]).reshape(-1, 20)
        loss = compute_loss(pred, tokens[:, 1:], PAD)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
