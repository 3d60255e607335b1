"""Labels padded by hand with 0 are correct when the loss ignores 0, or when the padding is packed away before the
loss (`pack_padded_sequence(targets, lengths)[0]` keeps only the real positions)."""
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence


def pad(labels, width):
    batch = torch.zeros(len(labels), width).long()
    for i, label in enumerate(labels):
        batch[i, :len(label)] = torch.tensor(label)
    return batch


torch.manual_seed(0)
model = nn.Linear(4, 6)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.CrossEntropyLoss(ignore_index=0)
plain = nn.CrossEntropyLoss()
for labels in ([[1, 2, 3], [4, 5]], [[5], [1, 2, 3, 4]]):
    lengths = sorted((len(label) for label in labels), reverse=True)
    labels = sorted(labels, key=len, reverse=True)
    targets = pad(labels, lengths[0])
    preds = model(torch.randn(len(labels), lengths[0], 4))
    loss = criterion(preds.reshape(-1, 6), targets.reshape(-1))
    packed = pack_padded_sequence(targets, lengths, batch_first=True)[0]
    scores = pack_padded_sequence(preds, lengths, batch_first=True)[0]
    loss = loss + plain(scores, packed)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
