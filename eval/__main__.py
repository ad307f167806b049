"""Entry point: ``python -m eval <benchmark> [options]``."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    benchmarks = ("locomo", "xquad")
    if not args or args[0] not in benchmarks:
        print(f"usage: python -m eval {{{','.join(benchmarks)}}} [options]", file=sys.stderr)
        return 2
    if args[0] == "xquad":
        from eval.xquad import main as xquad_main

        return xquad_main(args[1:])
    from eval.locomo.cli import main as locomo_main

    return locomo_main(args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
