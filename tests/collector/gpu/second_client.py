"""A second CUPTI client: torch.profiler inside an app traced by gcollect. gcollect must name it in a warning."""
import torch
from torch.profiler import ProfilerActivity, profile

x = torch.ones(1024, device="cuda")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(10):
        x = x * 1.5
    torch.cuda.synchronize()
print("second_client: cuda events seen by torch.profiler:",
      sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA))
