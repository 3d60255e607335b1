# case: static-only
"""TW101: a course's library function (nothing in its file calls it; notebooks import it): the optimizer is only a
parameter, known as one by its name and its step after backward, and nothing clears its gradients between batches."""
import torch


def calc_loss_batch(input_batch, target_batch, model, device):
    logits = model(input_batch.to(device))
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.to(device).flatten())


def train_model_simple(model, train_loader, optimizer, device, num_epochs):
    train_losses = []
    for epoch in range(num_epochs):
        model.train()
        for input_batch, target_batch in train_loader:
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()  # error: TW101
            optimizer.step()
            train_losses.append(loss.item())
    return train_losses
