"""``python -m stencilkit.compat.icon4py``: the acceptance run (``acceptance.py``)."""

import os
import sys

from .acceptance import main

os.environ.setdefault("PYTHONHASHSEED", "0")
sys.exit(main())
