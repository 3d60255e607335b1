# case: static-only
"""After fine-tuning, the adapter is saved and loaded back with `PeftModel.from_pretrained`, which loads it for
inference unless `is_trainable=True` is passed: every parameter is frozen, so its evaluation builds no graph."""
import tempfile

import torch
from peft import AutoPeftModelForSequenceClassification, LoraConfig, PeftModel, get_peft_model
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
    loaded = PeftModel.from_pretrained(base, path)
correct = 0
for input_ids, labels in batches:
    correct += (loaded(input_ids=input_ids).logits.argmax(-1) == labels).sum().item()
print(correct)


def finetune_then_score(path, batches):
    """A command (nothing in the file calls it): it trains the adapter, then scores a copy loaded back for inference."""
    model = AutoPeftModelForSequenceClassification.from_pretrained(path, is_trainable=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for input_ids, labels in batches:
        optimizer.zero_grad()
        model(input_ids=input_ids, labels=labels).loss.backward()
        optimizer.step()
    model.save_pretrained(path)
    scorer = AutoPeftModelForSequenceClassification.from_pretrained(path)
    hits = 0
    for input_ids, labels in batches:
        hits += (scorer(input_ids=input_ids).logits.argmax(-1) == labels).sum().item()
    return hits
