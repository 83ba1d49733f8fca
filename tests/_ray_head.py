"""A private Ray instance for the tests that run on Ray: 2 CPUs, no dashboard, its node on 127.0.0.1,
the workers' environment variables given, their output not sent to the driver; shut down on the way out."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager


@contextmanager
def private_ray(env_vars: Mapping[str, str]) -> Iterator[None]:
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             runtime_env={"env_vars": dict(env_vars)}, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()
