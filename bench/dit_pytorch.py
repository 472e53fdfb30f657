"""The DiT noise-prediction network of cpp/src/dit/network.cpp written in
Python PyTorch, timed the same way as bench_dit.cpp times the C++ one.

Usage: dit_pytorch.py WIDTH DEPTH HEADS H D THREADS REPS [DEVICE]
DEVICE is "cpu" (default) or "cuda" (timings then synchronise the device).
Prints one line: train_ms=<ms per training step, batch 64> sample_ms=<ms per
forward at batch 100 without gradients>.
"""
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def modulate(x, shift, scale):
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


class Block(nn.Module):
    def __init__(self, width, heads, hidden):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.norm2 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, width)
        self.ada = nn.Linear(width, 6 * width)

    def forward(self, x, c):
        sa, ca, ga, sm, cm, gm = self.ada(F.silu(c)).chunk(6, 1)
        B, N, W = x.shape
        dh = W // self.heads
        h = modulate(self.norm1(x), sa, ca)
        q, k, v = self.qkv(h).reshape(B, N, 3, self.heads, dh).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(dh), -1)
        a = (att @ v).transpose(1, 2).reshape(B, N, W)
        y = x + ga.unsqueeze(1) * self.proj(a)
        m = self.fc2(F.gelu(self.fc1(modulate(self.norm2(y), sm, cm)), approximate="tanh"))
        return y + gm.unsqueeze(1) * m


class DiT(nn.Module):
    def __init__(self, H, d, width, depth, heads, mlp_ratio=4.0, t0=1e-5, T=15.0):
        super().__init__()
        self.log_t0, self.log_T = math.log(t0), math.log(T)
        self.embed = nn.Linear(2 * d, width)
        self.t_fc1 = nn.Linear(256, width)
        self.t_fc2 = nn.Linear(width, width)
        self.blocks = nn.ModuleList([Block(width, heads, int(round(mlp_ratio * width))) for _ in range(depth)])
        self.norm_final = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.ada_final = nn.Linear(width, 2 * width)
        self.out = nn.Linear(width, d)
        pos = torch.arange(H, dtype=torch.float64).unsqueeze(1)
        omega = torch.pow(10000.0, -torch.arange(width // 2, dtype=torch.float64) / (width / 2.0))
        self.register_buffer("pos", torch.cat([torch.sin(pos * omega), torch.cos(pos * omega)], 1).float())

    def forward(self, x, mask, t):
        u = (torch.log(t) - self.log_t0) * (1000.0 / (self.log_T - self.log_t0))
        freqs = torch.exp(-math.log(10000.0) * torch.arange(128, dtype=u.dtype, device=u.device) / 128.0)
        args = u.unsqueeze(1) * freqs.unsqueeze(0)
        c = self.t_fc2(F.silu(self.t_fc1(torch.cat([torch.cos(args), torch.sin(args)], 1))))
        h = self.embed(torch.cat([x, mask], -1)) + self.pos.unsqueeze(0)
        for b in self.blocks:
            h = b(h, c)
        shift, scale = self.ada_final(F.silu(c)).chunk(2, 1)
        return self.out(modulate(self.norm_final(h), shift, scale))


def inputs(B, H, d, device):
    x = torch.randn(B, H, d)
    mask = (torch.rand(B, H, d) < 0.8).float()
    t = torch.exp(torch.empty(B).uniform_(math.log(1e-5), math.log(15.0)))
    return x.to(device), mask.to(device), t.to(device)


def main():
    width, depth, heads, H, d, threads, reps = (int(a) for a in sys.argv[1:8])
    device = torch.device(sys.argv[8] if len(sys.argv) > 8 else "cpu")
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    net = DiT(H, d, width, depth, heads)
    # Non-zero modulations so the timing does not profit from zeros.
    for p in net.parameters():
        nn.init.normal_(p, 0.0, 0.02)
    net = net.to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4, weight_decay=0.0)
    x, mask, t = inputs(64, H, d, device)
    eps = torch.randn(64, H, d).to(device)

    def train_step():
        loss = ((net(x, mask, t) - eps).square() * (1 - mask)).sum() / (1 - mask).sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()

    xs, ms, ts = inputs(100, H, d, device)

    def sample_step():
        with torch.no_grad():
            net(xs, ms, ts)

    out = []
    for step in (train_step, sample_step):
        step()  # warm-up
        sync()
        start = time.perf_counter()
        for _ in range(reps):
            step()
        sync()
        out.append(1000.0 * (time.perf_counter() - start) / reps)
    print("train_ms=%.3f sample_ms=%.3f" % tuple(out))


if __name__ == "__main__":
    main()
