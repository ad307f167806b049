"""``python -m eval.locomo``: the same as ``python -m eval locomo``."""

from eval.locomo.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
