"""Correct: the Hugging Face example form: step when the window is full or on the last step of the epoch."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main(gradient_accumulation_steps=3, num_train_epochs=2):
    torch.manual_seed(0)
    model = nn.Linear(6, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    train_dataloader = DataLoader(TensorDataset(torch.randn(44, 6), torch.randint(0, 2, (44,))), batch_size=4, shuffle=True)
    for epoch in range(num_train_epochs):
        model.train()
        for step, (x, y) in enumerate(train_dataloader):
            loss = nn.functional.cross_entropy(model(x), y) / gradient_accumulation_steps
            loss.backward()
            if step % gradient_accumulation_steps == 0 or step == len(train_dataloader) - 1:
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()


if __name__ == "__main__":
    main()
