"""``python -m stencilkit.bench [options]``: the same as ``stencilkit bench``."""

import sys

from .suite import main

sys.exit(main())
