# case: static-only
"""Validation images from a diffusers pipeline inside the training loop: `DiffusionPipeline.from_pretrained` gives a
pipeline, not an nn.Module, and its `__call__` runs under `torch.no_grad()` itself."""
import torch
from diffusers import DiffusionPipeline, UNet2DConditionModel

unet = UNet2DConditionModel.from_pretrained("some/model", subfolder="unet")
optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-5)
batches = [torch.randn(1, 4, 8, 8) for _ in range(4)]

for epoch in range(2):
    unet.train()
    for latents in batches:
        noise = torch.randn_like(latents)
        pred = unet(latents, 10, encoder_hidden_states=torch.randn(1, 77, 768)).sample
        loss = torch.nn.functional.mse_loss(pred, noise)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    pipeline = DiffusionPipeline.from_pretrained("some/model", unet=unet)
    images = []
    for _ in range(2):
        images.append(pipeline("a photo of a dog", num_inference_steps=25).images[0])
