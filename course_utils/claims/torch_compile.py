"""``torch.compile`` against eager PyTorch: a matmul-bound MLP, a fusion-bound chain, a train step.

Each pairing times the same function eager and compiled (:func:`compile_pair`);
the first compiled call, which pays for compilation, is recorded but not part
of the ratio.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from course_utils.claims.harness import Ctx, compare_ratios, medians
from course_utils.claims.verdicts import Measured, SkippedInSmoke


def compile_pair(ctx: Ctx, fn: Callable, x: Any, what: str) -> Measured:
    import torch

    from course_utils import timing

    compiled = torch.compile(fn)
    cmp = timing.compare(
        {"eager": lambda: fn(x), "torch.compile": lambda: compiled(x)},
        rtol=1e-4,
        atol=1e-4,
        target_s=ctx.target_s,
    )
    med = medians(cmp)
    first = cmp.measurements["torch.compile"].first_call_s
    return Measured(
        compare_ratios(cmp, "eager", "torch.compile"),
        f"{what}; first compiled call {timing.format_seconds(first)}",
        {"median_s": med, "compiled_first_call_s": first},
    )


def compile_matmul(ctx: Ctx) -> Measured:
    import torch

    d, batch = ctx.size((1024, 256), (512, 128))
    g = torch.Generator().manual_seed(0)
    ws = [ctx.torch_put(torch.randn(d, d, generator=g) / d**0.5) for _ in range(3)]
    x = ctx.torch_put(torch.randn(batch, d, generator=g))

    def mlp(x):
        for w in ws:
            x = torch.relu(x @ w)
        return x

    return compile_pair(
        ctx, mlp, x, f"3 layers of {d}x{d} matmul + ReLU, batch {batch}"
    )


def compile_fusion(ctx: Ctx) -> Measured:
    import torch

    n = ctx.size(4_000_000, 1_000_000)
    x = ctx.torch_put(torch.randn(n, generator=torch.Generator().manual_seed(0)))

    def chain(x):  # eight elementwise passes in eager mode; one fused loop compiled
        y = torch.sin(x) * torch.cos(x) + torch.tanh(x) * torch.sigmoid(x)
        return torch.relu(y - 0.5 * x * x + torch.exp(-x.abs()))

    return compile_pair(ctx, chain, x, f"elementwise chain over {n:,} floats")


def compile_training(ctx: Ctx) -> Measured:
    if ctx.smoke:
        raise SkippedInSmoke(
            "compiling a forward and backward pass costs tens of seconds on a small CPU; "
            "run `course claims` without --smoke"
        )
    import torch

    from course_utils import timing
    from course_utils.models import TorchCNN

    torch.manual_seed(0)
    eager_model = TorchCNN().to(ctx.torch_device)
    compiled_source = copy.deepcopy(eager_model)
    compiled_model = torch.compile(compiled_source)
    batch = 256
    g = torch.Generator().manual_seed(1)
    X = ctx.torch_put(torch.rand(batch, 1, 8, 8, generator=g))
    y = ctx.torch_put(torch.randint(0, 10, (batch,), generator=g))

    def make_step(model, params):
        opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(X), y)
            loss.backward()
            opt.step()
            return loss.detach()

        return step

    cmp = timing.compare(
        {
            "eager": make_step(eager_model, eager_model.parameters()),
            "torch.compile(model)": make_step(
                compiled_model, compiled_source.parameters()
            ),
        },
        rtol=1e-4,
        atol=1e-5,
        target_s=ctx.target_s,
    )
    med = medians(cmp)
    first = cmp.measurements["torch.compile(model)"].first_call_s
    return Measured(
        compare_ratios(cmp, "eager", "torch.compile(model)"),
        f"course CNN, batch {batch}, AdamW; first compiled step {timing.format_seconds(first)}",
        {"median_s": med, "compiled_first_call_s": first},
    )
