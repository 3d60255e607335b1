"""TW108: language-model steps whose token ids come from a corpus object of the script: the ids one of its methods
returns (`corpus.get_data(...)`, its batch size left at the default) and the ids it keeps in an attribute
(`corpus.train`, cut into rows by a helper sized by a command-line flag). The loss reads `output.detach()`."""
import argparse

import torch
from torch import nn


class Corpus:
    def __init__(self, words):
        self.vocab = {w: i for i, w in enumerate(sorted(set(words)))}
        self.train = self.tokenize(words)

    def tokenize(self, words):
        return torch.tensor([self.vocab[w] for w in words]).long()

    def get_data(self, words, batch_size=2):
        ids = torch.LongTensor(len(words))
        for i, word in enumerate(words):
            ids[i] = self.vocab[word]
        return ids.view(batch_size, -1)


def batchify(data, rows):
    return data[: data.size(0) // rows * rows].view(rows, -1)


parser = argparse.ArgumentParser()
parser.add_argument("--rows", type=int, default=2)
args = parser.parse_args()
torch.manual_seed(0)
words = "the cat sat on the mat and the dog sat on the log".split()
corpus = Corpus(words)
model = nn.Sequential(nn.Embedding(len(corpus.vocab), 8), nn.Linear(8, len(corpus.vocab)))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

ids = corpus.get_data(words[:12])
for i in range(0, ids.size(1) - 2, 2):
    inputs, targets = ids[:, i:i + 2], ids[:, i + 1:i + 3]
    outputs = model(inputs)
    loss = criterion(outputs.detach().flatten(0, 1), targets.reshape(-1)).requires_grad_()
    optimizer.zero_grad()
    loss.backward()  # error: TW108
    optimizer.step()

rows = batchify(corpus.train, args.rows)
for i in range(0, rows.size(1) - 2, 2):
    outputs = model(rows[:, i:i + 2])
    loss = criterion(outputs.flatten(0, 1).detach(), rows[:, i + 1:i + 3].reshape(-1)).requires_grad_()
    optimizer.zero_grad()
    loss.backward()  # error: TW108
    optimizer.step()
print(loss.item())
