"""An epoch loop: a shuffled DataLoader, StepLR stepped per epoch, validation
every k epochs, the best checkpoint reloaded for a final test.

Tags as in iterations_estimate_loss.py. 4 steps per epoch, 5 epochs:
validation after steps 8 and 16, the final test after step 20.
"""
import io

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X, Y = torch.randn(48, 6), torch.randint(0, 3, (48,))
train_set, val_set = TensorDataset(X[:32], Y[:32]), TensorDataset(X[32:], Y[32:])
train_loader = DataLoader(train_set, batch_size=8, shuffle=True)  # inject[TW401]: train_loader = DataLoader(train_set, batch_size=8)  # expect[TW401]: 5
val_loader = DataLoader(val_set, batch_size=8)
epochs, validate_every = 5, 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.2))
        self.classifier = nn.Linear(16, 3)

    def forward(self, x):
        out = self.classifier(self.features(x))
        pass  # inject[TW301]: out = out.softmax(1)
        return out


model = Net()
criterion = nn.CrossEntropyLoss()  # inject[TW303]: criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)  # inject[TW603]: optimizer = torch.optim.SGD(model.classifier.parameters(), lr=0.05, momentum=0.9)
pass  # inject[TW109]: model.classifier = nn.Linear(16, 3)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
class_means = torch.zeros(3)


def evaluate(loader):
    model.eval()  # inject[TW202]: pass  # expect[TW201]: 9
    correct = 0
    with torch.no_grad():  # inject[TW203]: if True:
        for x, y in loader:
            out = model(x)  # expect[TW202]: 8  # expect[TW203]: 8
            correct += (out.argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


best = io.BytesIO()
for epoch in range(epochs):
    model.train()  # inject[TW201]: pass
    pass  # inject[TW205]: model.features.eval()  # expect[TW205]: 1
    pass  # inject[TW105]: scheduler.step()  # expect[TW105]: 1
    running_loss = 0.0
    for i, (x, y) in enumerate(train_loader):
        optimizer.zero_grad()  # inject[TW101]: pass
        pass  # inject[TW103]: torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect[TW103]: 1
        out = model(x)
        pass  # inject[TW601]: out = out * float("nan") if (epoch, i) == (1, 2) else out
        loss = criterion(out, y)  # expect[TW301]: 1  # expect[TW303]: 1
        pass  # inject[TW108]: loss = torch.tensor(loss.item(), requires_grad=True)
        pass  # inject[TW602]: class_means = 0.9 * class_means + 0.1 * out.mean(0)  # expect[TW602]: 1
        loss.backward()  # expect[TW101]: 2  # expect[TW108]: 1  # expect[TW601]: 7
        pass  # inject[TW102]: optimizer.zero_grad()  # expect[TW102]: 1
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()  # expect[TW109]: 1  # expect[TW603]: 1
        pass  # inject[TW106]: scheduler.step()  # expect[TW106]: 1
        running_loss += loss.item()  # inject[TW204]: running_loss += loss  # expect[TW204]: 1
    scheduler.step()  # inject[TW105]: pass
    if (epoch + 1) % validate_every == 0:
        accuracy = evaluate(val_loader)
        torch.save(model.state_dict(), best)
best = io.BytesIO(best.getvalue())  # as if read back from the checkpoint folder another run wrote
model.load_state_dict(torch.load(best, weights_only=True))  # inject[TW502]: model.load_state_dict(torch.load(best, weights_only=False))  # expect[TW502]: 20
test_accuracy = evaluate(val_loader)
