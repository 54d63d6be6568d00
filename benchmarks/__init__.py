"""The benchmark suite: each row run side by side with the tools users pick instead.

Run it with ``python -m benchmarks`` (see ``benchmarks/README.md``). Rows live in
``benchmarks.rows``; the harness (registry, backends, runner, reports) lives in
the private modules of this package.
"""

import os
import warnings

#: The benchmarks' nodes run without a cluster secret on a private server, on
#: purpose (the ``remote/secret`` rows measure what a secret costs): the
#: ``actors.remote.TrustedBrokerWarning`` is filtered here, in this process,
#: and for the node processes the rows start (they inherit the environment).
#: By message and base category, so no module is imported to filter it.
_TRUSTED = "ignore:a node runs without a cluster secret:UserWarning"
warnings.filterwarnings("ignore", "a node runs without a cluster secret", UserWarning)
if _TRUSTED not in os.environ.get("PYTHONWARNINGS", "").split(","):
    os.environ["PYTHONWARNINGS"] = ",".join(
        filter(None, (os.environ.get("PYTHONWARNINGS"), _TRUSTED))
    )
