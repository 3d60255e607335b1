# case: static-only
"""TW203: an adapter loaded back with `is_trainable=True` keeps its parameters trainable: evaluating it with autograd
on records a graph per batch."""
import tempfile

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import AutoModelForSequenceClassification

torch.manual_seed(0)
batches = [(torch.randint(0, 100, (4, 8)), torch.randint(0, 2, (4,))) for _ in range(3)]
model = get_peft_model(AutoModelForSequenceClassification.from_pretrained("prajjwal1/bert-tiny", num_labels=2),
                       LoraConfig(r=4, target_modules=["query", "value"]))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for input_ids, labels in batches:
    optimizer.zero_grad()
    model(input_ids=input_ids, labels=labels).loss.backward()
    optimizer.step()

with tempfile.TemporaryDirectory() as path:
    model.save_pretrained(path)
    base = AutoModelForSequenceClassification.from_pretrained("prajjwal1/bert-tiny", num_labels=2)
    loaded = PeftModel.from_pretrained(base, path, is_trainable=True)
correct = 0
for input_ids, labels in batches:
    correct += (loaded(input_ids=input_ids).logits.argmax(-1) == labels).sum().item()  # error: TW203
print(correct)
