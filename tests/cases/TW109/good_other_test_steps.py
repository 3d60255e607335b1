"""Two tests: one trains with its optimizer; the other re-creates a model under the same names and never steps."""
import torch
from torch import nn


def test_training_changes_weights():
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    before = model.weight.detach().clone()
    for _ in range(3):
        optimizer.zero_grad()
        model(torch.randn(5, 4)).pow(2).mean().backward()
        optimizer.step()
    assert not torch.equal(before, model.weight)


def test_reload_matches():
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    state = model.state_dict()
    model = nn.Linear(4, 2)
    model.load_state_dict(state)
    assert optimizer.param_groups[0]["lr"] == 1e-2


test_training_changes_weights()
test_reload_matches()
