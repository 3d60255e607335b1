"""TW403: a bag-of-words model on the GPU fed index tensors built on the CPU from a word list."""
import torch
from torch import nn

torch.manual_seed(0)
words = "the cat sat on the mat and the dog sat on the log".split()
vocab = {w: i for i, w in enumerate(sorted(set(words)))}
data = [([words[i - 1], words[i + 1]], words[i]) for i in range(1, len(words) - 1)]
model = nn.Sequential(nn.Embedding(len(vocab), 8), nn.Flatten(0), nn.Linear(16, len(vocab)), nn.LogSoftmax(dim=0))
if torch.cuda.is_available():
    model = model.cuda()
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for context, target in data:
        context = torch.LongTensor([vocab[w] for w in context])
        target = torch.LongTensor([vocab[target]])
        if torch.cuda.is_available():
            target = target.cuda()
        out = model(context)  # static: TW403
        loss = criterion(out.unsqueeze(0), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
