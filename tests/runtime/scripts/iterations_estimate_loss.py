"""An iteration loop in nanoGPT's shape: estimate_loss() every eval_interval
iterations from iteration 0, a GradScaler, clipping after unscale_.

`# inject[CODE]: TEXT` replaces the line's code with TEXT in the variant that
commits CODE; `# expect[CODE]: STEP` marks where that variant's finding must
be reported and its first step (see tests/runtime/test_injection_matrix.py).
"""
import io

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
vocab, block, batch = 32, 8, 8
data = torch.randint(0, vocab, (400,))
train_data, val_data = data[:320], data[320:]
max_iters, eval_interval, eval_iters = 24, 10, 2


def get_batch(split):
    source = train_data if split == "train" else val_data
    ix = torch.randint(len(source) - block - 1, (batch,))
    x = torch.stack([source[i:i + block] for i in ix])
    y = torch.stack([source[i + 1:i + block + 1] for i in ix])
    return x, y


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(32, vocab)

    def forward(self, idx, targets=None):
        logits = self.head(self.drop(self.embed(idx)))
        pass  # inject[TW301]: logits = logits.softmax(-1)
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, vocab), targets.view(-1))  # inject[TW303]: loss = F.nll_loss(logits.view(-1, vocab), targets.view(-1))  # expect[TW301]: 0  # expect[TW303]: 0
        return logits, loss


model = TinyLM()
written = io.BytesIO()
torch.save(model.state_dict(), written)
checkpoint = io.BytesIO(written.getvalue())  # bytes from elsewhere: a downloaded checkpoint
model.load_state_dict(torch.load(checkpoint, weights_only=True))  # inject[TW502]: model.load_state_dict(torch.load(checkpoint, weights_only=False))  # expect[TW502]: 0
pass  # inject[TW205]: model.embed.requires_grad = False
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)  # inject[TW603]: optimizer = torch.optim.AdamW(model.head.parameters(), lr=1e-2)
pass  # inject[TW109]: model.head = nn.Linear(32, vocab)
scaler = torch.amp.GradScaler("cpu")
running = torch.zeros(vocab)
history = []


@torch.no_grad()  # inject[TW203]:
def estimate_loss():
    out = {}
    model.eval()  # inject[TW202]: pass  # expect[TW201]: 1
    for split in ("train", "val"):
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            logits, loss = model(X, Y)  # expect[TW202]: 0  # expect[TW203]: 0
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()  # inject[TW201]: pass
    return out


for it in range(max_iters):
    if it % eval_interval == 0:
        losses = estimate_loss()
    X, Y = get_batch("train")
    logits, loss = model(X, Y)
    pass  # inject[TW108]: loss = torch.tensor(loss.item(), requires_grad=True)
    pass  # inject[TW601]: loss = loss * float("nan") if it == 6 else loss
    pass  # inject[TW602]: running = 0.9 * running + 0.1 * logits.mean((0, 1))  # expect[TW602]: 1
    pass  # inject[TW204]: history.append(loss)  # expect[TW204]: 1
    pass  # inject[TW103]: torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect[TW103]: 1
    scaler.scale(loss).backward()  # expect[TW101]: 2  # expect[TW108]: 1  # expect[TW601]: 7
    pass  # inject[TW102]: optimizer.zero_grad(set_to_none=False)  # expect[TW102]: 1
    scaler.unscale_(optimizer)  # inject[TW104]: pass
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect[TW104]: 1
    scaler.step(optimizer)  # expect[TW109]: 1  # expect[TW205]: 1  # expect[TW603]: 1
    scaler.update()
    optimizer.zero_grad(set_to_none=True)  # inject[TW101]: pass
