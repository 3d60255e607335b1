"""A language-model loop with no optimizer, in the shape of pytorch/examples'
word_language_model: batchified tokens, truncated BPTT with the hidden state
repackaged, clipping, and SGD written by hand with ``p.data.add_``; the
learning rate is divided when validation stops improving.

Tags as in iterations_estimate_loss.py. 6 updates per epoch, 4 epochs:
evaluation after updates 6, 12, 18 and 24, the final test after 24.
"""
import math

import torch
from torch import nn

torch.manual_seed(0)
ntokens, bptt, batch_size = 20, 5, 4
corpus = torch.randint(0, ntokens, (4 * 31 + 4 * 11,))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data[: nbatch * bsz].view(bsz, -1).t().contiguous()


train_data, val_data = batchify(corpus[:124], batch_size), batchify(corpus[124:], batch_size)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(ntokens, 16)
        self.rnn = nn.LSTM(16, 16)
        self.decoder = nn.Linear(16, ntokens)

    def forward(self, tokens, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(tokens)), hidden)
        decoded = self.decoder(self.drop(output)).view(-1, ntokens)
        return torch.log_softmax(decoded, dim=1), hidden  # inject[TW303]: return decoded, hidden

    def init_hidden(self, bsz):
        return (torch.zeros(1, bsz, 16), torch.zeros(1, bsz, 16))


def repackage_hidden(h):
    return tuple(v.detach() for v in h)


model = RNNModel()
criterion = nn.NLLLoss()
lr, clip, epochs = 2.0, 0.25, 4
running = torch.zeros(ntokens)
history = []


def evaluate(source):
    model.eval()  # inject[TW202]: pass  # expect[TW201]: 7
    total_loss = 0.0
    hidden = model.init_hidden(batch_size)
    with torch.no_grad():  # inject[TW203]: if True:
        for i in range(0, source.size(0) - 1, bptt):
            data, targets = get_batch(source, i)
            output, hidden = model(data, hidden)  # expect[TW202]: 6  # expect[TW203]: 6
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()  # expect[TW303]: 6
    return total_loss / (len(source) - 1)


def train(epoch):
    global running
    model.train()  # inject[TW201]: pass
    hidden = model.init_hidden(batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()  # inject[TW101]: pass
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)  # expect[TW303]: 1
        pass  # inject[TW601]: loss = loss * float("nan") if (epoch, batch) == (2, 3) else loss
        pass  # inject[TW602]: running = 0.9 * running + 0.1 * output.mean(0)  # expect[TW602]: 1
        pass  # inject[TW204]: history.append(loss)  # expect[TW204]: 1
        pass  # inject[TW103]: torch.nn.utils.clip_grad_norm_(model.parameters(), clip)  # expect[TW103]: 1
        loss.backward()  # expect[TW101]: 2  # expect[TW601]: 10  # expect[TW603]: 1
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():  # inject[TW603]: for p in [*model.rnn.parameters(), *model.decoder.parameters()]:
            p.data.add_(p.grad, alpha=-lr)


best_val_loss = None
for epoch in range(1, epochs + 1):
    train(epoch)
    val_loss = evaluate(val_data)
    if best_val_loss is None or val_loss < best_val_loss:
        best_val_loss = val_loss
    else:
        lr /= 4.0
test_ppl = math.exp(evaluate(val_data))
