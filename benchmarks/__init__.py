"""The benchmark suite: each row run side by side with the tools users pick instead.

Run it with ``python -m benchmarks`` (see ``benchmarks/README.md``). Rows live in
``benchmarks.rows``; the harness (registry, backends, runner, reports) lives in
the private modules of this package.
"""
