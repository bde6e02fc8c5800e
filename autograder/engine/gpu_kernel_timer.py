"""Time exported GPU kernels on a CUDA GPU, with CuPy and numpy only (no TVM, no course package).

Standalone: `gpu_benchmark export DIR` copies this file into DIR as `time_kernels.py`, beside the
kernels' CUDA source and `plan.json`; on a machine with a GPU run `python DIR/time_kernels.py`.
It cannot run where there is no CUDA GPU (this course's build machines have none): there it
says so and exits 3. Nothing of it was run on a GPU when it was written: its first run on a
lent GPU is its test.

What it does, for every schedule in the plan:
1. builds its kernels with CuPy's RawModule (nvcc from the CUDA source for this GPU, else NVRTC,
   else the PTX exported beside it), and allocates the buffers the plan names;
2. runs its launches once on seeded inputs, the output NaN-filled first, and checks it against a
   float64 numpy reference, as the grader does (a wrong schedule is reported and not timed);
3. times the yardstick and every other schedule in interleaved rounds of rotating order (CUDA
   events around enough back-to-back calls to last at least `--sample-ms`), as the CPU grader's
   timer does, and reports each schedule's speed against the yardstick: the median of the
   per-round ratios and its distribution-free 99% interval;
4. prints the speed-band edges the reference's measurement supports (see `suggest_bands`).

    python time_kernels.py [--rounds 30] [--sample-ms 2] [--json results.json]
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIDENCE = 0.99
MARGIN = 1.10  # the top edge sits this far below the reference's measured interval (another day, another process)
LEAST_SUPPORTED = 1.15  # a top edge below this does not separate a good schedule from the yardstick


def reference_output(x, w, b, padding: int):
    """relu(conv2d(x, w, padding) + b) in float64 numpy (as the grader's problems/workload.reference)."""
    import numpy as np

    x64 = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    windows = np.lib.stride_tricks.sliding_window_view(x64, (w.shape[2], w.shape[3]), axis=(2, 3))
    conv = np.einsum("ncyxij,ocij->noyx", windows, w.astype(np.float64), optimize=True)
    return np.maximum(conv + b.astype(np.float64), 0.0)


def seeded_inputs(plan: dict):
    """The same inputs as the grader's problems/workload.random_inputs for the plan's seed."""
    import numpy as np

    rng = np.random.default_rng(plan["seed"])
    shape = plan["shape"]
    return {role: rng.standard_normal(tuple(shape[key]), dtype=np.float32)
            for role, key in (("x", "input"), ("w", "weight"), ("b", "bias"))}


def median_interval(ratios: list[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """A distribution-free interval for the median: the k-th smallest and k-th largest of n
    ratios, k the largest with 2 P(Binomial(n, 1/2) <= k - 1) <= 1 - confidence; None when n is
    too small for any."""
    n = len(ratios)
    ordered = sorted(ratios)
    k, tail = 0, 0.0
    while k < n // 2:
        tail += math.comb(n, k) / 2 ** n
        if 2 * tail > 1 - confidence:
            break
        k += 1
    if k == 0:
        return None
    return ordered[k - 1], ordered[n - k]


def suggest_bands(low: float, credits: list[float]) -> list[float] | None:
    """Band edges the reference's measurement supports, or None where it supports none.

    The top edge (full credit) is the low end of the reference's interval less MARGIN, rounded
    down to 0.05: the reference earns it with room for another process or another day of the same
    GPU. The lower edges divide the way from 1x (the yardstick, no credit) to the top edge in
    proportion to their credit (with thirds of the points: a third and two thirds of the way).
    A top edge under LEAST_SUPPORTED separates nothing: no bands are supported."""
    top = math.floor(low / MARGIN * 20) / 20
    if top < LEAST_SUPPORTED:
        return None
    full = max(credits)
    return [round(1 + (top - 1) * credit / full, 2) for credit in credits]


def _module(cupy, plan_entry: dict, log: list[str]):
    """The schedule's kernels as a CuPy RawModule: nvcc, else NVRTC, else the exported PTX."""
    source = (HERE / plan_entry["source"]).read_text(encoding="utf-8")
    attempts = [("nvcc", lambda: cupy.RawModule(code=source, backend="nvcc")),
                ("nvrtc", lambda: cupy.RawModule(code=source, backend="nvrtc", options=("-std=c++17",)))]
    if "ptx" in plan_entry:
        attempts.append(("ptx", lambda: cupy.RawModule(path=str(HERE / plan_entry["ptx"]))))
    for name, build in attempts:
        try:
            module = build()
            for launch in plan_entry["launches"]:
                module.get_function(launch["kernel"])  # compiles now, not inside a timing
            log.append(f"built with {name}")
            return module
        except Exception as error:  # noqa: BLE001  (each backend fails its own way; the next is tried)
            log.append(f"{name} failed: {str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__}")
    raise RuntimeError("no way to build the kernels: " + "; ".join(log))


class Program:
    """One schedule's kernels, buffers and launches on the GPU."""

    def __init__(self, cupy, numpy, name: str, entry: dict, inputs: dict):
        self.name, self.cupy = name, cupy
        self.log: list[str] = []
        self.module = _module(cupy, entry, self.log)
        self.buffers = {}
        for buffer in entry["buffers"]:
            if buffer["role"] in inputs:
                array = cupy.asarray(inputs[buffer["role"]].ravel())
                if array.size != buffer["elements"]:
                    raise RuntimeError(f"{name}: buffer {buffer['name']} has {buffer['elements']} elements, the input {array.size}")
            else:
                array = cupy.full(buffer["elements"], numpy.nan, dtype=buffer["dtype"])
            self.buffers[buffer["name"]] = array
        self.output = next(self.buffers[b["name"]] for b in entry["buffers"] if b["role"] == "output")
        scalar = {"int32": numpy.int32, "int64": numpy.int64}
        self.launches = []
        for launch in entry["launches"]:
            args = tuple(self.buffers[a[1]] if a[0] == "buffer" else scalar[a[1]](a[2]) for a in launch["args"])
            self.launches.append((self.module.get_function(launch["kernel"]), tuple(launch["grid"]), tuple(launch["block"]), args))

    def __call__(self) -> None:
        for kernel, grid, block, args in self.launches:
            kernel(grid, block, args)

    def time_ms(self, calls: int) -> float:
        """Milliseconds a call, over `calls` back-to-back calls between two CUDA events."""
        start, end = self.cupy.cuda.Event(), self.cupy.cuda.Event()
        start.record()
        for _ in range(calls):
            self()
        end.record()
        end.synchronize()
        return self.cupy.cuda.get_elapsed_time(start, end) / calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--sample-ms", type=float, default=2.0, help="each sample lasts at least this long")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    try:
        import cupy
        import numpy
    except ImportError as error:
        print(f"needs CuPy and numpy on a machine with a CUDA GPU: {error}", file=sys.stderr)
        return 3
    try:
        device = cupy.cuda.Device(0)
        gpu = cupy.cuda.runtime.getDeviceProperties(device.id)["name"].decode()
    except Exception as error:  # noqa: BLE001  (no driver, no device)
        print(f"no CUDA GPU here: {error}", file=sys.stderr)
        return 3
    plan = json.loads((HERE / "plan.json").read_text(encoding="utf-8"))
    inputs = seeded_inputs(plan)
    expected = reference_output(inputs["x"], inputs["w"], inputs["b"], plan["shape"]["padding"])
    allowed = plan["atol"] + plan["rtol"] * numpy.abs(expected)
    print(f"GPU: {gpu} (compute capability {device.compute_capability}); workload {plan['shape']}")
    programs, results = {}, {"gpu": gpu, "schedules": {}}
    for name, entry in plan["schedules"].items():
        try:
            program = Program(cupy, numpy, name, entry, inputs)
            program()
            cupy.cuda.Device().synchronize()
            output = cupy.asnumpy(program.output).reshape(expected.shape)
        except Exception as error:  # noqa: BLE001  (reported per schedule; the others are timed)
            print(f"{name}: FAILED to build or run: {error}")
            results["schedules"][name] = {"error": str(error)}
            continue
        wrong = int((~(numpy.abs(output - expected) <= allowed)).sum())
        print(f"{name}: {'; '.join(program.log)}; {'correct' if not wrong else f'{wrong} WRONG outputs: not timed'}")
        results["schedules"][name] = {"correct": not wrong}
        if not wrong:
            programs[name] = program
    yardstick = plan["yardstick"]
    if yardstick not in programs:
        print("the yardstick did not run correctly: nothing to compare with", file=sys.stderr)
        return 1
    # How many calls make a sample of at least --sample-ms, per schedule (after a warm-up).
    calls = {}
    for name, program in programs.items():
        per_call = max(program.time_ms(3), 1e-4)
        calls[name] = max(1, math.ceil(args.sample_ms / per_call))
    names = list(programs)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(args.rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(programs[name].time_ms(calls[name]))
    print(f"\n{args.rounds} interleaved rounds (rotating order), CUDA events; ratio = yardstick's time / the schedule's")
    for name in names:
        ratios = [y / t for y, t in zip(times[yardstick], times[name])]
        interval = median_interval(ratios)
        median = statistics.median(ratios)
        entry = results["schedules"][name]
        entry.update(median_ms=statistics.median(times[name]), ratio=median, interval=interval)
        shown = f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "(too few rounds for an interval)"
        print(f"  {name}: {statistics.median(times[name]) * 1e3:.2f} us a call, {median:.3f}x the yardstick's speed, "
              f"{int(CONFIDENCE * 100)}% interval {shown}")
    reference = next((n for n in ("reference",) if n in programs), None)
    credits = [credit for _, credit in plan["bands"]]
    print(f"\nThe problem's band edges now: {', '.join(f'{edge:g}x' for edge, _ in plan['bands'])}")
    if reference is None:
        print("No correct 'reference' schedule was timed: no band edges to suggest.")
    else:
        interval = results["schedules"][reference]["interval"]
        edges = suggest_bands(interval[0], credits) if interval else None
        results["suggested_edges"] = edges
        if edges is None:
            print(f"The reference is not clearly faster than the yardstick on this GPU (low end of its interval "
                  f"{interval[0] if interval else float('nan'):.3f}x): these measurements support no speed bands.")
        else:
            print(f"Edges these measurements support (top = the reference's low end / {MARGIN}, rounded down; "
                  f"the others in proportion to credit): {', '.join(f'{e:g}x' for e in edges)}")
            print("  speed_bands=(" + ", ".join(f"SpeedBand({e:g}, {c:.4g})" for e, c in zip(edges, credits)) + ")")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
