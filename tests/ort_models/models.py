"""Model zoo for the runtime's ORT equivalence checks and benchmarks.

Exports torchvision CNNs (random init, fixed seed, opset 13) and two small
transformer encoders (ViT-style and BERT-style) to ONNX with python3-torch.
Models are written atomically into a cache directory and reused between runs.
"""
import os

TORCHVISION = ['resnet18', 'resnet50', 'mobilenet_v2', 'squeezenet1_1', 'googlenet', 'vgg11', 'efficientnet_b0']
# Segmentation heads: bilinear Resize (pytorch_half_pixel, from sizes) of the head's output.
SEGMENTATION = ['lraspp_mobilenet_v3_large']
TRANSFORMERS = ['vit_small', 'bert_small']
# The rest of torchvision's classification architectures that export at opset 13 and
# run here (swin_t needs ScatterND, maxvit_t Einsum). With TORCHVISION and vit_b_16
# they are the warm-speed sweep (bench/runtime/bench_sweep.py); CI checks them at
# SMALL_RES (vit_b_16 through vit_small, the same VisionTransformer class scaled down).
FAMILY = ['alexnet', 'convnext_tiny', 'densenet121', 'efficientnet_v2_s', 'inception_v3', 'mnasnet1_0',
          'mobilenet_v3_small', 'mobilenet_v3_large', 'regnet_x_400mf', 'regnet_y_400mf', 'resnext50_32x4d',
          'shufflenet_v2_x1_0', 'wide_resnet50_2']
SWEEP = sorted(TORCHVISION + FAMILY + ['vit_b_16'])
ALL = TORCHVISION + SEGMENTATION + FAMILY + TRANSFORMERS

# AdaptiveAvgPool2d((7, 7)) (VGG-11) and ((6, 6)) (AlexNet) export only when the
# feature map is a multiple of the output; Inception-v3 needs 75x75 and is trained at 299.
MIN_RES = {'vgg11': 224, 'alexnet': 224, 'inception_v3': 80}
FULL_RES = {'inception_v3': 299}
SMALL_RES = 96  # TORCHVISION in CI
SMALL_RES_FAMILY = 64  # FAMILY in CI: smaller, to keep the check's time modest


def resolution(name, small):
    if name in TRANSFORMERS:
        return 32 if name == 'vit_small' else 16  # image side / sequence length
    if not small:
        return FULL_RES.get(name, 224)
    return max(SMALL_RES_FAMILY if name in FAMILY else SMALL_RES, MIN_RES.get(name, 0))


def _bert_small():
    import torch
    from torch import nn

    class Layer(nn.Module):
        def __init__(self, d, h, f):
            super().__init__()
            self.h, self.dk = h, d // h
            self.qkv = nn.Linear(d, 3 * d)
            self.out = nn.Linear(d, d)
            self.ln1 = nn.LayerNorm(d)
            self.ff1 = nn.Linear(d, f)
            self.ff2 = nn.Linear(f, d)
            self.ln2 = nn.LayerNorm(d)

        def forward(self, x, bias):
            b, s, d = x.shape
            q, k, v = self.qkv(x).split(d, dim=-1)
            q = q.reshape(b, s, self.h, self.dk).transpose(1, 2)
            k = k.reshape(b, s, self.h, self.dk).transpose(1, 2)
            v = v.reshape(b, s, self.h, self.dk).transpose(1, 2)
            att = torch.matmul(q, k.transpose(-1, -2)) / (self.dk ** 0.5) + bias
            att = torch.softmax(att, dim=-1)
            y = torch.matmul(att, v).transpose(1, 2).reshape(b, s, d)
            x = self.ln1(x + self.out(y))
            return self.ln2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))

    class Bert(nn.Module):
        def __init__(self, vocab=100, d=64, h=4, f=128, layers=2, seq=16):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(seq, d)
            self.ln = nn.LayerNorm(d)
            self.layers = nn.ModuleList([Layer(d, h, f) for _ in range(layers)])
            self.head = nn.Linear(d, 2)

        def forward(self, ids):
            mask = (ids != 0).float()
            bias = ((1.0 - mask) * -10000.0)[:, None, None, :]
            pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
            x = self.ln(self.tok(ids) + self.pos(pos))
            for layer in self.layers:
                x = layer(x, bias)
            return self.head(torch.tanh(x[:, 0]))

    return Bert()


def build(name, res):
    """Returns (module, example inputs tuple, input names)."""
    import torch
    import torchvision
    torch.manual_seed(0)
    if name == 'vit_small':
        m = torchvision.models.VisionTransformer(image_size=res, patch_size=8, num_layers=2, num_heads=4,
                                                 hidden_dim=64, mlp_dim=128, num_classes=10)
        torch.nn.init.normal_(m.heads.head.weight, std=0.5)  # torchvision zero-initializes the head
        return m, (torch.randn(1, 3, res, res),), ['input']
    if name == 'bert_small':
        ids = torch.randint(1, 100, (1, res))
        ids[0, -3:] = 0  # padding exercises the attention mask
        return _bert_small(), (ids,), ['input_ids']
    kwargs = {'weights': None}
    if name in ('googlenet', 'inception_v3'):
        kwargs.update(aux_logits=False, init_weights=True)
    if name in SEGMENTATION:
        kwargs['weights_backbone'] = None
        m = getattr(torchvision.models.segmentation, name)(**kwargs)
    else:
        m = getattr(torchvision.models, name)(**kwargs)
    # Non-trivial BatchNorm statistics so that folding them is actually tested.
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.1, 0.1)
            mod.running_var.uniform_(0.5, 1.5)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.1, 0.1)
    # Non-trivial LayerNorm affine parameters and ConvNeXt layer scales (initialized to
    # 1e-6, which would leave every block's branch out of the comparison).
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.LayerNorm) and mod.elementwise_affine:
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.1, 0.1)
            if hasattr(mod, 'layer_scale') and isinstance(mod.layer_scale, torch.nn.Parameter):
                mod.layer_scale.uniform_(0.5, 1.0)
        if name.startswith('vit_'):
            torch.nn.init.normal_(m.heads.head.weight, std=0.05)  # torchvision zero-initializes the head
    return m, (torch.randn(1, 3, res, res),), ['input']


def magnitude_prune(module, sparsity):
    """Zeroes the smallest-magnitude fraction of every Conv/Linear weight (per layer)."""
    import torch
    with torch.no_grad():
        for mod in module.modules():
            if isinstance(mod, (torch.nn.Conv2d, torch.nn.Linear)) and mod.weight.numel() > 1000:
                w = mod.weight
                k = int(w.numel() * sparsity)
                if k == 0:
                    continue
                thresh = w.abs().flatten().kthvalue(k).values
                w[w.abs() <= thresh] = 0.0


def export(name, res, path, prune=0.0):
    """Exports `name` at resolution `res` to `path` (atomically) unless it exists."""
    if os.path.exists(path):
        return path
    import torch
    m, args, input_names = build(name, res)
    if prune > 0:
        magnitude_prune(m, prune)
    m.eval()
    tmp = f'{path}.tmp.{os.getpid()}'
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # Grad stays enabled: it keeps nn.MultiheadAttention off its fused fast path,
    # which has no ONNX export.
    torch.onnx.export(m, args, tmp, opset_version=13, input_names=input_names, output_names=['output'],
                      do_constant_folding=True)
    os.replace(tmp, path)
    return path
