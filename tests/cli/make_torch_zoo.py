#!/usr/bin/python3
"""A zoo made the way a user makes one: three small torch models trained on
sklearn datasets, each exported with torch.onnx.export and a dynamic batch
axis, as dense, pruned (torch.nn.utils.prune: unstructured and structured) and
int8 (fake-quant QDQ from quantization-aware training, and convert()) variants;
and a fourth, parity, a new head (odd or even digit) trained on the digits
model's frozen convolutions, exported dense: the two share their backbone's
weights. The test split saved as data/inputs.npy and data/labels.npy. No zoo.json.

  make_torch_zoo.py OUT_DIR [--tasks digits,cancer,wine,parity]

OUT_DIR/<task>/<variant>.onnx, OUT_DIR/<task>/data/{inputs,labels}.npy.
Seeded: the same call gives the same files.
"""
import argparse
import copy
import os
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.utils.prune as prune
from sklearn import datasets
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

warnings.filterwarnings("ignore")
Q = torch.ao.quantization


class DigitsCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant, self.dequant = Q.QuantStub(), Q.DeQuantStub()
        self.conv1, self.relu1 = nn.Conv2d(1, 16, 3, padding=1), nn.ReLU()
        self.conv2, self.relu2 = nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.ReLU()
        self.conv3, self.relu3 = nn.Conv2d(32, 32, 3, padding=1, stride=2), nn.ReLU()
        self.pool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(32, 10)

    def forward(self, x):
        x = self.quant(x)
        x = self.relu1(self.conv1(x))
        x = self.relu2(self.conv2(x))
        x = self.relu3(self.conv3(x))
        return self.dequant(self.fc(torch.flatten(self.pool(x), 1)))


class Mlp(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.quant, self.dequant = Q.QuantStub(), Q.DeQuantStub()
        self.fc1, self.relu1 = nn.Linear(features, 64), nn.ReLU()
        self.fc2, self.relu2 = nn.Linear(64, 64), nn.ReLU()
        self.fc3 = nn.Linear(64, classes)

    def forward(self, x):
        x = self.quant(x)
        return self.dequant(self.fc3(self.relu2(self.fc2(self.relu1(self.fc1(x))))))


def load(task):
    if task == "digits":
        d = datasets.load_digits()
        x = np.kron(d.images / 16.0, np.ones((2, 2)))[:, None].astype(np.float32)  # 8x8 -> 16x16
        return x, d.target, DigitsCnn()
    d = datasets.load_breast_cancer() if task == "cancer" else datasets.load_wine()
    return d.data, d.target, Mlp(d.data.shape[1], int(d.target.max()) + 1)


def fit(model, x, y, epochs, lr=3e-3):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    xt, yt = torch.tensor(x, dtype=torch.float32), torch.tensor(y)
    g = torch.Generator().manual_seed(0)
    model.train()
    for _ in range(epochs):
        for idx in torch.randperm(len(xt), generator=g).split(32):
            opt.zero_grad()
            nn.functional.cross_entropy(model(xt[idx]), yt[idx]).backward()
            opt.step()
    return model.eval()


def weighted(model):
    return [m for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]


def export(model, sample, path):
    torch.onnx.export(model, torch.tensor(sample[:1]), path, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, opset_version=13)


def variants(task, dense, x, y, epochs):
    out = {"dense": dense}
    u = copy.deepcopy(dense)
    prune.global_unstructured([(m, "weight") for m in weighted(u)], pruning_method=prune.L1Unstructured,
                              amount=0.8 if task != "digits" else 0.5)
    fit(u, x, y, max(1, epochs // 3), lr=1e-3)
    for m in weighted(u):
        prune.remove(m, "weight")
    out["u80" if task != "digits" else "u50"] = u
    s = copy.deepcopy(dense)
    for m in weighted(s)[:-1]:  # whole output channels / neurons, not the classifier's
        prune.ln_structured(m, "weight", amount=0.5, n=2, dim=0)
    fit(s, x, y, max(1, epochs // 3), lr=1e-3)
    for m in weighted(s)[:-1]:
        prune.remove(m, "weight")
    out["s50"] = s
    xt = torch.tensor(x, dtype=torch.float32)
    if task == "digits":  # quantization-aware training: exported as QuantizeLinear/DequantizeLinear pairs
        qat = copy.deepcopy(dense).train()
        qat.qconfig = Q.get_default_qat_qconfig("qnnpack", version=0)
        Q.prepare_qat(qat, inplace=True)
        fit(qat, x, y, 1, lr=1e-4)
        qat.apply(Q.disable_observer)
        out["int8q"] = qat.eval()
    conv = copy.deepcopy(dense)
    conv.qconfig = Q.get_default_qconfig("qnnpack")
    Q.prepare(conv, inplace=True)
    conv(xt[:256])
    Q.convert(conv, inplace=True)
    out["int8"] = conv
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tasks", default="digits,cancer,wine,parity")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.backends.quantized.engine = "qnnpack"  # what Debian's torch ships (no fbgemm)
    trained = {}
    for task in args.tasks.split(","):
        if task == "parity":  # a head on the digits model's frozen backbone
            head = copy.deepcopy(trained["digits"][0])
            for p in head.parameters():
                p.requires_grad = False
            head.fc = nn.Linear(32, 2)
            xtr, xte, ytr, yte = trained["digits"][1]
            ytr, yte = ytr % 2, yte % 2
            fit(head, xtr, ytr, 30, lr=1e-2)
            os.makedirs(os.path.join(args.out, task, "data"), exist_ok=True)
            export(head, xte, os.path.join(args.out, task, "dense.onnx"))
            np.save(os.path.join(args.out, task, "data", "inputs.npy"), xte)
            np.save(os.path.join(args.out, task, "data", "labels.npy"), yte.astype(np.int64))
            continue
        x, y, model = load(task)
        xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)
        if task != "digits":
            scaler = StandardScaler().fit(xtr)
            xtr, xte = scaler.transform(xtr), scaler.transform(xte)
        xtr, xte = xtr.astype(np.float32), xte.astype(np.float32)
        epochs = 12 if task == "digits" else 40
        dense = fit(model, xtr, ytr, epochs)
        trained[task] = (dense, (xtr, xte, ytr, yte))
        os.makedirs(os.path.join(args.out, task, "data"), exist_ok=True)
        for vid, m in variants(task, dense, xtr, ytr, epochs).items():
            export(m, xte, os.path.join(args.out, task, vid + ".onnx"))
        np.save(os.path.join(args.out, task, "data", "inputs.npy"), xte)
        np.save(os.path.join(args.out, task, "data", "labels.npy"), yte.astype(np.int64))


if __name__ == "__main__":
    main()
