"""A small CNN's training loop in plain torch: what `make demo` profiles
with `sonde run --torch`, and what bench/bench_torch.py times.

    python examples/torch_cnn.py [STEPS]

Each step runs conv/batchnorm/relu/pool forward, the loss, backward and an
SGD step on a batch of 16 random 3x32x32 images, on one intra-op thread
(steadier timings on a shared machine); the last line printed is the
loop's wall time."""

import sys
import time

import torch
from torch import nn
from torch.autograd.profiler import record_function


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def train(model, opt, images, labels, steps):
    for _ in range(steps):
        with record_function("train_step"):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            opt.step()
    return loss.item()


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = SmallCNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images, labels = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    start = time.perf_counter()
    loss = train(model, opt, images, labels, steps)
    print("loss %.4f after %d steps" % (loss, steps))
    print("loop: %.3f s" % (time.perf_counter() - start))


if __name__ == "__main__":
    main()
