"""``python -m benchmarks``: run the benchmark suite (see ``benchmarks/README.md``)."""

from benchmarks._cli import main

raise SystemExit(main())
