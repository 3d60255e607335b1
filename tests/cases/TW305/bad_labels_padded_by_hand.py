"""TW305: label converters (one of two, chosen by a flag) pad the label ids by hand into a tensor filled with 0;
the loss of the attention branch is built, in the same branch of the same test, without ignore_index=0."""
import torch
from torch import nn


class CTCConverter:
    def __init__(self, chars):
        self.index = {c: i + 1 for i, c in enumerate(chars)}

    def encode(self, labels, width=6):
        batch = torch.LongTensor(len(labels), width).fill_(0)
        for i, label in enumerate(labels):
            batch[i][:len(label)] = torch.LongTensor([self.index[c] for c in label])
        return batch, torch.IntTensor([len(label) for label in labels])


class AttnConverter:
    def __init__(self, chars):
        self.index = {c: i + 1 for i, c in enumerate(chars)}

    def encode(self, labels, width=6):
        batch = torch.LongTensor(len(labels), width + 1).fill_(0)
        for i, label in enumerate(labels):
            batch[i][1:1 + len(label)] = torch.LongTensor([self.index[c] for c in label])
        return batch, torch.IntTensor([len(label) + 1 for label in labels])


def train(prediction):
    if "CTC" in prediction:
        converter = CTCConverter("abcde")
        criterion = nn.CTCLoss(zero_infinity=True)
    else:
        converter = AttnConverter("abcde")
        criterion = nn.CrossEntropyLoss()
    model = nn.Linear(4, 6)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for labels in (["ab", "cdeab"], ["e", "abcd"], ["dd", "a"]):
        text, length = converter.encode(labels)
        features = torch.randn(len(labels), text.size(1) - 1, 4)
        preds = model(features)
        if "CTC" in prediction:
            log_probs = preds.log_softmax(2).permute(1, 0, 2)
            cost = criterion(log_probs, text, torch.full((len(labels),), preds.size(1)), length)
        else:
            target = text[:, 1:]
            cost = criterion(preds.reshape(-1, preds.shape[-1]), target.reshape(-1))  # static: TW305
        optimizer.zero_grad()
        cost.backward()
        optimizer.step()
    return cost.item()


torch.manual_seed(0)
print(train("Attn"))
