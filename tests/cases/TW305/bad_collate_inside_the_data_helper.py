"""TW305: a data helper builds the loader with a collate_fn defined inside it, padding with the `<pad>` id of its
table of special symbols, and returns it with the vocabulary; the training helper's loss ignores only -100."""
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader


def get_data(pairs):
    special_symbols = {"<unk>": 0, "<pad>": 1, "<bos>": 2}

    def _collate_fn(batch):
        src_batch, tgt_batch = [], []
        for src, tgt in batch:
            src_batch.append(torch.tensor(src))
            tgt_batch.append(torch.tensor(tgt))
        src_batch = pad_sequence(src_batch, batch_first=True, padding_value=special_symbols["<pad>"])
        tgt_batch = pad_sequence(tgt_batch, batch_first=True, padding_value=special_symbols["<pad>"])
        return src_batch, tgt_batch

    loader = DataLoader(pairs, batch_size=3, shuffle=True, collate_fn=_collate_fn)
    return loader, special_symbols


class Tagger(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, 16)
        self.out = nn.Linear(16, vocab)

    def forward(self, x):
        return self.out(self.embed(x))


def train(model, train_dl, loss_fn, optimizer):
    for src, tgt in train_dl:
        logits = model(src)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))  # error: TW305
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    lengths = [3, 9, 5, 2, 8, 4]
    pairs = [(torch.randint(3, 20, (n,)).tolist(), torch.randint(3, 20, (n,)).tolist()) for n in lengths]
    train_dl, special_symbols = get_data(pairs)
    model = Tagger(20)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        print(epoch, train(model, train_dl, loss_fn, optimizer))


if __name__ == "__main__":
    main()
