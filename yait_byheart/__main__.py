"""``python -m yait_byheart``: the command line (see `yait_byheart.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m yait_byheart"))
