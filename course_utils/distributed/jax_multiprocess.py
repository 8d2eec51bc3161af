"""Data parallelism across JAX processes: ``jax.distributed.initialize`` and one global mesh.

One machine (2 processes x 4 CPU devices), one command per process:
    python -m course_utils.distributed.jax_multiprocess --coordinator 127.0.0.1:1234 \
        --num-processes 2 --process-id 0 --local-devices 4      # and --process-id 1
Many hosts: the same command on each host with the coordinator's address, or
under SLURM simply ``srun python -m course_utils.distributed.jax_multiprocess``
(no flags: ``jax.distributed.initialize()`` reads SLURM's variables).

Every process runs the same program. The mesh spans all processes' devices;
each process supplies only its block of the batch. Reported: the gradients
(replicated, so every process holds them all) and what each process saw.
"""

from __future__ import annotations

import argparse

from course_utils.distributed import worker


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coordinator", help="HOST:PORT of process 0 (omit under SLURM)")
    ap.add_argument("--num-processes", type=int)
    ap.add_argument("--process-id", type=int)
    ap.add_argument("--local-devices", type=int, default=0,
                    help="simulate this many CPU devices per process (0: use the real devices)")  # fmt: skip
    return ap.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    worker.strict()
    import jax

    if args.local_devices:
        jax.config.update("jax_num_cpu_devices", args.local_devices)
    # [initialize]
    jax.distributed.initialize(
        coordinator_address=args.coordinator,  # None under SLURM / Cloud TPU: detected
        num_processes=args.num_processes,
        process_id=args.process_id,
        initialization_timeout=60,
    )
    # [/initialize]
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    from course_utils.distributed.problem import params_of, shard_rows

    def loss_fn(params, X, y):  # lesson 05's loss, unchanged
        h = jax.nn.relu(X @ params["W1"] + params["b1"])
        return jnp.mean((h @ params["W2"] + params["b2"] - y) ** 2)

    prob = worker.load_problem()
    # [global_batch]
    # one mesh over the devices of every process
    mesh = jax.make_mesh((jax.device_count(),), ("data",), (AxisType.Explicit,))
    me, n = jax.process_index(), jax.process_count()
    rows = NamedSharding(mesh, P("data"))
    X = jax.make_array_from_process_local_data(rows, shard_rows(prob["X"], me, n))
    y = jax.make_array_from_process_local_data(rows, shard_rows(prob["y"], me, n))
    params = jax.device_put(params_of(prob), NamedSharding(mesh, P()))  # replicated
    grads = jax.jit(jax.grad(loss_fn))(params, X, y)  # one program, every process
    # [/global_batch]
    local = {k: np.asarray(v.addressable_data(0)) for k, v in grads.items()}
    worker.save_report(me, {
        "process_index": me, "process_count": n,
        "device_count": jax.device_count(), "local_device_count": jax.local_device_count(),
        "global_batch_shape": list(X.shape),
        "local_rows": int(sum(s.data.shape[0] for s in X.addressable_shards)),
        "grads_sharding": str(grads["W1"].sharding.spec),
        **worker.prefixed("grad_", local),
    })  # fmt: skip
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
