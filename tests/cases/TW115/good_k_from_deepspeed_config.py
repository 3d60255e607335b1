"""Correct for this rule: the accumulation count comes from a DeepSpeed config, and under DeepSpeed the engine
accumulates and steps itself (the optimizer the loop steps is then a wrapper whose step does nothing); without
DeepSpeed the count is 1. The loop's own `step % k` counting decides nothing here."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main(deepspeed_config=None, epochs=2):
    torch.manual_seed(0)
    model = nn.Linear(6, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = DataLoader(TensorDataset(torch.randn(30, 6), torch.randint(0, 2, (30,))), batch_size=4, shuffle=True)
    if deepspeed_config is not None:
        accumulation_steps = deepspeed_config["gradient_accumulation_steps"]
    else:
        accumulation_steps = 1
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            loss = nn.functional.cross_entropy(model(x), y) / accumulation_steps
            loss.backward()
            if step % accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()


if __name__ == "__main__":
    main()
