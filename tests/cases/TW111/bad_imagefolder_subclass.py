# case: static-only
"""TW111: SwAV's layout: the dataset is a subclass of torchvision's ImageFolder (multi-crop views), a map-style dataset,
and the loader of the DDP model has no DistributedSampler: every rank reads all of it."""
import torch
import torch.distributed as dist
import torchvision.datasets as datasets
import torchvision.transforms as transforms
from torch import nn


class MultiCropDataset(datasets.ImageFolder):
    def __init__(self, root, crops=2):
        super().__init__(root)
        self.crops = crops
        self.trans = transforms.Compose([transforms.RandomResizedCrop(32), transforms.ToTensor()])

    def __getitem__(self, index):
        path, _ = self.samples[index]
        image = self.loader(path)
        return [self.trans(image) for _ in range(self.crops)]


def main(data_path, epochs=10):
    dist.init_process_group("nccl")
    torch.manual_seed(0)
    train_dataset = MultiCropDataset(data_path)
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=64, shuffle=True,  # error: TW111
                                               num_workers=4, drop_last=True)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 128)).cuda()
    model = nn.parallel.DistributedDataParallel(model, device_ids=[dist.get_rank()])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for views in train_loader:
            optimizer.zero_grad()
            embeddings = [model(view.cuda(non_blocking=True)) for view in views]
            loss = -nn.functional.cosine_similarity(embeddings[0], embeddings[1]).mean()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main("imagenet/train")
