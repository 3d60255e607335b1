# case: static-only
"""Gradient checks: the input is detached, cloned and made to require grad again (in place, through a helper, by
assignment, or re-wrapped with `requires_grad=True`), so the reference computation has a leaf of its own that its
backward() reaches on purpose. No model output was cut off."""
import torch


def fused_scale(x, weight):
    return torch.nn.functional.linear(x, weight) * 2


def fresh_copy(tensor, requires_grad=True):
    return tensor.clone().detach().requires_grad_(requires_grad)


def test_gradients_match_the_reference():
    torch.manual_seed(0)
    weight = torch.randn(3, 4)
    x = torch.randn(2, 4, requires_grad=True)
    fused_scale(x, weight).pow(2).sum().backward()

    x_ref = x.detach().clone().requires_grad_(True)
    expected = (x_ref @ weight.t()) * 2
    expected.pow(2).sum().backward()
    assert torch.allclose(x.grad, x_ref.grad)

    x_copy = fresh_copy(x, True)
    again = (x_copy @ weight.t()) * 2
    again.pow(2).sum().backward()
    assert torch.allclose(x.grad, x_copy.grad)

    x_leaf = x.detach().clone()
    x_leaf.requires_grad = True
    ((x_leaf @ weight.t()) * 2).pow(2).sum().backward()
    assert torch.allclose(x.grad, x_leaf.grad)

    x_wrapped = torch.tensor(x.tolist(), requires_grad=True)
    ((x_wrapped @ weight.t()) * 2).pow(2).sum().backward()
    assert torch.allclose(x.grad, x_wrapped.grad)


test_gradients_match_the_reference()
