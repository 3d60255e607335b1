"""Lengths left on the CPU are correct: the model sorts by them and hands them to `pack_padded_sequence`, which wants
them on the host. Only the padded tokens meet the model's parameters, and they are moved."""
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader, TensorDataset


class Reader(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, 2)

    def forward(self, tokens, lengths):
        lengths, order = lengths.sort(descending=True)
        packed = pack_padded_sequence(self.embedding(tokens[order]), lengths, batch_first=True)
        _, hidden = self.rnn(packed)
        return self.head(hidden[-1])[order.argsort()]


torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
data = TensorDataset(torch.randint(0, 9, (16, 5)), torch.randint(1, 6, (16,)), torch.randint(0, 2, (16,)))
loader = DataLoader(data, batch_size=4, shuffle=True)
model = Reader(9, 6).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    for tokens, lengths, labels in loader:
        tokens, labels = tokens.to(device), labels.to(device)
        loss = nn.functional.cross_entropy(model(tokens, lengths), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
