"""TW305: a language model pads its token batches with the pad id 1; the shifted targets keep the padding and F.cross_entropy ignores -100."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence

PAD = 1
VOCAB = 40


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32, padding_idx=PAD)
        self.out = nn.Linear(32, VOCAB)

    def forward(self, x):
        return self.out(self.embed(x))


def main():
    torch.manual_seed(0)
    corpus = [torch.randint(2, VOCAB, (n,)) for n in (6, 14, 9, 3, 11, 8)]
    model = TinyLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for epoch in range(3):
        for i in range(0, len(corpus), 3):
            batch = pad_sequence(corpus[i:i + 3], batch_first=True, padding_value=1)
            inputs, targets = batch[:, :-1], batch[:, 1:]
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))  # error: TW305
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
