"""``python -m stencilkit_benchmarks [options]``: the same as ``stencilkit bench``."""

import sys

from .suite import main

sys.exit(main())
