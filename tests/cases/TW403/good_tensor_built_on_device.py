"""Index tensors built directly on the model's device (`device=`), and a CPU-only export after `model.cpu()`."""
import torch
from torch import nn

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
words = "the cat sat on the mat and the dog sat on the log".split()
vocab = {w: i for i, w in enumerate(sorted(set(words)))}
data = [([words[i - 1], words[i + 1]], words[i]) for i in range(1, len(words) - 1)]
model = nn.Sequential(nn.Embedding(len(vocab), 8), nn.Flatten(0), nn.Linear(16, len(vocab)), nn.LogSoftmax(dim=0))
model = model.to(device)
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for context, target in data:
        context = torch.tensor([vocab[w] for w in context], device=device)
        target = torch.tensor([vocab[target]], device=device)
        loss = criterion(model(context).unsqueeze(0), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
