"""`tvm-course bench-cost-model`: what grading the cost-model assignment costs (rehearsal/cost_model_benchmark.py)."""
from __future__ import annotations

import argparse

from ..errors import ExitCode


def bench(args: argparse.Namespace) -> int:
    from ..rehearsal.cost_model_benchmark import run_benchmark

    run_benchmark(shapes=args.shapes, mcpu=args.mcpu)
    return ExitCode.OK


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench-cost-model",
        help="benchmark the cost-model assignment: first tables, one submission graded, beside the tiling one",
        description="A benchmark (it prints numbers, asserts none): each of SHAPES students' first candidate table, "
                    "one cost-model submission graded with its table cached, and one tiling submission beside it.",
    )
    parser.add_argument("--shapes", type=int, default=2, help="how many students' shapes to measure a first table of (default 2)")
    parser.add_argument("--mcpu", default=None, help="compile for this CPU (LLVM's name), as --mcpu elsewhere")
    parser.set_defaults(handler=bench)
