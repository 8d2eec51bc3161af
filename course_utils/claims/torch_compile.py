"""``torch.compile`` against eager PyTorch: a matmul-bound MLP, a fusion-bound chain, a train step.

Each times the registry's "compile" pairing: the same function eager and
compiled (:func:`compile_pair`); the first compiled call, which pays for
compilation from an empty Inductor cache, is recorded but not part of the ratio.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from course_utils.claims.harness import Ctx, paired, pairing_names
from course_utils.claims.verdict_rule import Measured, SkippedInSmoke


def _compiled(
    ctx: Ctx, claim_id: str, eager: Callable, compiled: Callable, what: str, **tol
) -> Measured:
    """Time the "compile" pairing of ``claim_id``: eager time / compiled time per round."""
    from course_utils import timing

    num, den = pairing_names(claim_id, "compile")
    # The first compiled call compiles from scratch (an empty Inductor cache), as
    # in a new process on a machine that never compiled it, not from this disk.
    with timing.cold_inductor_cache():
        cmp = timing.compare({num: eager, den: compiled}, target_s=ctx.target_s, **tol)
    first = cmp.measurements[den].first_call_s
    return paired(
        cmp,
        claim_id,
        "compile",
        f"{what}; first compiled call {timing.format_seconds(first)}, "
        "Inductor's caches empty",
        {"inductor_cache": "empty"},
    )


def compile_pair(ctx: Ctx, claim_id: str, fn: Callable, x: Any, what: str) -> Measured:
    import torch

    compiled = torch.compile(fn)
    return _compiled(
        ctx,
        claim_id,
        lambda: fn(x),
        lambda: compiled(x),
        what,
        rtol=1e-4,
        atol=1e-4,
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
        ctx,
        "compile-matmul",
        mlp,
        x,
        f"3 layers of {d}x{d} matmul + ReLU, batch {batch}",
    )


def compile_fusion(ctx: Ctx) -> Measured:
    import torch

    n = ctx.size(4_000_000, 1_000_000)
    x = ctx.torch_put(torch.randn(n, generator=torch.Generator().manual_seed(0)))

    def chain(x):  # eight elementwise passes in eager mode; one fused loop compiled
        y = torch.sin(x) * torch.cos(x) + torch.tanh(x) * torch.sigmoid(x)
        return torch.relu(y - 0.5 * x * x + torch.exp(-x.abs()))

    return compile_pair(
        ctx, "compile-fusion", chain, x, f"elementwise chain over {n:,} floats"
    )


def compile_training(ctx: Ctx) -> Measured:
    if ctx.smoke:
        raise SkippedInSmoke(
            "compiling a forward and backward pass from an empty Inductor cache takes tens of seconds on a small CPU; "
            "run `course claims` without --smoke"
        )
    import torch

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

    return _compiled(
        ctx,
        "compile-training",
        make_step(eager_model, eager_model.parameters()),
        make_step(compiled_model, compiled_source.parameters()),
        f"course CNN, torch.compile(model), batch {batch}, AdamW",
        rtol=1e-4,
        atol=1e-5,
    )
