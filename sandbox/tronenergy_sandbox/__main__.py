from __future__ import annotations

import sys

from tronenergy_sandbox.cli import main

sys.exit(main())
