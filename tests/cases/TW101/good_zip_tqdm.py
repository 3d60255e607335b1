"""Semi-supervised loop over zip(labelled, unlabelled) wrapped in tqdm, cleared every step."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm

torch.manual_seed(0)
labelled = DataLoader(TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,))), batch_size=8,
                      shuffle=True, generator=torch.Generator().manual_seed(0))
unlabelled = DataLoader(TensorDataset(torch.randn(32, 8)), batch_size=8, shuffle=True,
                        generator=torch.Generator().manual_seed(1))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(2):
    progress = tqdm(zip(labelled, unlabelled), total=len(labelled), disable=True)
    for (x, y), (u,) in progress:
        optimizer.zero_grad()
        supervised = nn.functional.cross_entropy(model(x), y)
        probs = model(u).softmax(dim=1)
        entropy = -(probs * probs.clamp_min(1e-8).log()).sum(dim=1).mean()
        loss = supervised + 0.1 * entropy
        loss.backward()
        optimizer.step()
        progress.set_postfix(loss=loss.item())
    print(epoch, loss.item())
