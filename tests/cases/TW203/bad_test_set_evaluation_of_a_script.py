"""TW203: `test()` of a training script evaluates on the test set with autograd on, once, after training. The script
is no test module and `test` no unit test: its forward is the inference the script exists for."""
import torch
from torch import nn

torch.manual_seed(0)
x_train, y_train = torch.randn(32, 4), torch.randint(0, 2, (32,))
x_test, y_test = torch.randn(16, 4), torch.randint(0, 2, (16,))
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)


def test(net, inputs, labels):
    net.eval()
    logits = net(inputs)  # error: TW203
    return (logits.argmax(1) == labels).float().mean().item()


for epoch in range(3):
    model.train()
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x_train), y_train).backward()
    optimizer.step()
print(test(model, x_test, y_test))
