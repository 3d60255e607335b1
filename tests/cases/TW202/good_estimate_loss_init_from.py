"""nanoGPT's layout: the model comes from one of `init_from`'s branches (built from scratch, or by the class's
own `GPT.from_pretrained`, which builds a fresh `GPT` too: training mode), and `estimate_loss()`, run every few
iterations from iteration 0, switches to eval mode first."""
import torch
from torch import nn

init_from = "scratch"


class GPT(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, y):
        logits = self.drop(self.fc(x))
        return logits, nn.functional.mse_loss(logits, y)

    @classmethod
    def from_pretrained(cls, name):
        model = cls(8)
        with torch.no_grad():
            model.fc.weight.copy_(torch.eye(8))
        return model


torch.manual_seed(0)
if init_from == "scratch":
    model = GPT()
elif init_from.startswith("gpt2"):
    model = GPT.from_pretrained(init_from)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
eval_iters = 2


def get_batch(split):
    return torch.randn(4, 8), torch.randn(4, 8)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


iter_num = 0
while iter_num < 6:
    if iter_num % 3 == 0:
        print(iter_num, estimate_loss())
    X, Y = get_batch("train")
    logits, loss = model(X, Y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    iter_num += 1
