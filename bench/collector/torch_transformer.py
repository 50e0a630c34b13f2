"""An 8-layer bf16 transformer training loop: the workload on which PC sampling once killed PyTorch apps at exit.

  python3 torch_transformer.py [--steps N] [--layers L] [--dim D] [--seq S] [--batch B]

nn.TransformerEncoderLayer (nn.MultiheadAttention inside), autocast to bf16, AdamW, one NVTX range per step:
the kernel mix (cuBLASLt nvjet GEMMs, flash attention, layer_norm, softmax, fused optimizer, many lazily loaded
modules in the first step) that crashed `gcollect --pc-sampling`. A few seconds per run on an H200.
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(1000, args.dim)
            self.layers = torch.nn.ModuleList(
                torch.nn.TransformerEncoderLayer(args.dim, args.heads, 4 * args.dim, dropout=0.1, batch_first=True)
                for _ in range(args.layers))
            self.norm = torch.nn.LayerNorm(args.dim)
            self.head = torch.nn.Linear(args.dim, 1000)

        def forward(self, tokens):
            x = self.embed(tokens)
            for layer in self.layers:
                x = layer(x)
            return self.head(self.norm(x))

    model = Model().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, 1000, (args.batch, args.seq), device=dev)
    target = torch.randint(0, 1000, (args.batch, args.seq), device=dev)
    t0 = time.time()
    for step in range(args.steps):
        torch.cuda.nvtx.range_push(f"step {step}")
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens)
            loss = torch.nn.functional.cross_entropy(logits.float().view(-1, 1000), target.view(-1))
        loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
        if step == 0:
            torch.cuda.synchronize()
            print(f"torch_transformer: first step done {time.time() - t0:.2f} s", flush=True)
    torch.cuda.synchronize()
    print(f"torch_transformer: {args.steps} steps, loss {loss.item():.4f}, {time.time() - t0:.2f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
