"""A training loop for the TensorBoard tests (test_torch_tensorboard.py):
a small convolutional net, SGD with momentum, STEPS steps, one
record_function region a step.

    torch_steps_loop.py                 the loop alone (what sonde runs)
    torch_steps_loop.py torch DIR [W:A[:R]]
                                        under torch.profiler, started right
                                        after `import torch` (where sonde's
                                        --torch starts), each step marked
                                        by prof.step(), the trace written
                                        by tensorboard_trace_handler(DIR);
                                        every step, or those of
                                        schedule(wait=W, warmup=0, active=A,
                                        repeat=R (default 1))
    torch_steps_loop.py no-optimizer    a loop that steps no optimizer and
                                        calls sonde.step() instead
    torch_steps_loop.py each-step FILE  under torch.profiler, one step a
                                        cycle (schedule(wait=0, warmup=0,
                                        active=1, repeat=STEPS)): FILE gets
                                        each step's key_averages() as JSON,
                                        [{operator name: calls}, ...]
"""
import sys

import torch

STEPS = 6
mode = sys.argv[1] if len(sys.argv) > 1 else ""
prof = None
if mode == "torch":
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
    wait, active, repeat = 0, STEPS, 1
    if len(sys.argv) > 3:
        given = [int(n) for n in sys.argv[3].split(":")]
        wait, active = given[:2]
        repeat = given[2] if len(given) > 2 else 1
        STEPS = int(sys.argv[4]) if len(sys.argv) > 4 else STEPS
    prof = profile(activities=[ProfilerActivity.CPU],
                   schedule=schedule(wait=wait, warmup=0, active=active, repeat=repeat),
                   on_trace_ready=tensorboard_trace_handler(sys.argv[2]))
    prof.start()
elif mode == "each-step":
    import json
    from torch.profiler import ProfilerActivity, profile, schedule
    tables = []

    def keep_table(done):
        tables.append({e.key: e.count for e in done.key_averages()
                       if not e.key.startswith("ProfilerStep")})
        with open(sys.argv[2], "w") as f:
            json.dump(tables, f)

    prof = profile(activities=[ProfilerActivity.CPU],
                   schedule=schedule(wait=0, warmup=0, active=1, repeat=STEPS),
                   on_trace_ready=keep_table)
    prof.start()

torch.manual_seed(3)
net = torch.nn.Sequential(torch.nn.Conv2d(3, 6, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                          torch.nn.Flatten(), torch.nn.Linear(6 * 7 * 7, 5))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
images, labels = torch.randn(8, 3, 16, 16), torch.randint(0, 5, (8,))


def train_step():
    opt.zero_grad()
    with torch.autograd.profiler.record_function("loss_and_grad"):
        loss = torch.nn.functional.cross_entropy(net(images), labels)
        loss.backward()
    opt.step()


def eval_step():
    with torch.no_grad():
        net(images).argmax(1)
    import sonde
    sonde.step()


for _ in range(STEPS):
    if mode == "no-optimizer":
        eval_step()
    else:
        train_step()
    if prof is not None:
        prof.step()
if prof is not None:
    prof.stop()
print("trained", flush=True)
