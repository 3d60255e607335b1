"""Correct: train_test_split with random_state in a script that resumes: the same split every time."""
import io

import numpy as np
import torch
from sklearn.model_selection import train_test_split
from torch import nn

rows = np.random.default_rng(0).normal(size=(200, 5)).astype("float32")
labels = (rows[:, 0] > 0).astype("int64")
x_train, x_val, y_train, y_val = train_test_split(rows, labels, test_size=0.2, random_state=0)
model = nn.Linear(5, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
checkpoint = io.BytesIO()
torch.save({"model": model.state_dict(), "epoch": 0}, checkpoint)
checkpoint.seek(0)
state = torch.load(checkpoint, weights_only=True)
model.load_state_dict(state["model"])
for epoch in range(state["epoch"], 3):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(torch.from_numpy(x_train)), torch.from_numpy(y_train)).backward()
    optimizer.step()
