# Records the torch.profiler (Kineto) fixture tests/data/h200_torch_profiler.json.gz on the GPU machine:
# a small MLP training loop, 5 profiled steps, exported as Chrome trace JSON and gzipped.
#   python3 scripts/gpu/torch_profiler_fixture.py OUT.json.gz
import gzip, os, sys, tempfile
import torch
import torch.nn.functional as F
from torch.profiler import profile, record_function, ProfilerActivity

out = sys.argv[1]
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")

def step():
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

for _ in range(3):  # warm-up: cuBLAS handles, allocator
    step()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
    for i in range(5):
        with record_function(f"step_{i}"):
            step()
    torch.cuda.synchronize()
tmp = tempfile.mktemp(suffix=".json")
prof.export_chrome_trace(tmp)
with open(tmp, "rb") as f, gzip.open(out, "wb") as g:
    g.write(f.read())
print(out, os.path.getsize(out), "bytes")
