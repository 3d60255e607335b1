"""The same GPT-style trainer dividing the model's loss by the number of micro-batches before backward."""
import torch
from torch import nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab=16, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx, targets=None):
        logits = self.head(self.embed(idx))
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def get_batch(data, batch_size=4, block=6):
    ix = torch.randint(len(data) - block - 1, (batch_size,))
    x = torch.stack([data[i:i + block] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block] for i in ix])
    return x, y


torch.manual_seed(0)
data = torch.randint(0, 16, (100,))
model = TinyLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
accumulation_steps = 4
X, Y = get_batch(data)
for iter_num in range(3):
    for micro_step in range(accumulation_steps):
        logits, loss = model(X, Y)
        loss = loss / accumulation_steps
        X, Y = get_batch(data)
        loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
print(loss.item())
