"""TW403: the decoder moves only the buffers it builds itself (`torch.zeros(...).to(device)`), never its inputs: the
captions left on the CPU meet its embedding on the device."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Decoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, features, captions, lengths):
        lengths, order = lengths.sort(descending=True)
        captions = captions[order]
        scores = torch.zeros(captions.size(0), captions.size(1), self.out.out_features).to(device)
        embedded = self.embedding(captions) + features[order].unsqueeze(1)
        for t in range(int(lengths.max())):
            scores[:, t] = self.out(embedded[:, t])
        return scores


torch.manual_seed(0)
data = TensorDataset(torch.randn(16, 6), torch.randint(0, 9, (16, 5)), torch.randint(1, 6, (16,)), torch.randint(0, 9, (16,)))
loader = DataLoader(data, batch_size=4, shuffle=True)
decoder = Decoder(9, 6).to(device)
optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-3)
for epoch in range(2):
    for features, captions, lengths, labels in loader:
        features, lengths, labels = features.to(device), lengths.to(device), labels.to(device)
        scores = decoder(features, captions, lengths)  # static: TW403
        loss = nn.functional.cross_entropy(scores[:, 0], labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
