"""``python -m eval.longmemeval``: the same as ``python -m eval longmemeval``."""

from eval.longmemeval.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
