"""The learned cost model, small enough to watch: sample, measure, fit, rank.

Candidates come from a design space the lesson writes in a cell with the schedule's sampling
primitives (`sample_perfect_tile`, `sample_categorical`): every candidate is the same template
with different sampled decisions. MetaSchedule's own XGBoost model (`XGBModel`, with the
`PerStoreFeature` extractor) is fitted to the measured times of some candidates and asked to
rank the rest. The model only orders candidates it is given; it never writes one.

The lesson searches the network's classifier head (`relu(x @ w + b)`), not the convolution:
the convolution's fast schedules are the tiling assignment's to find, and a search over them
printed in a lesson would hand them out.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tables import Table

# Names of the first 16 values of a PerStoreFeature row: counts of arithmetic operations a store
# executes (each stored as log2(1 + count)). Order from TVM's
# src/s_tir/meta_schedule/feature_extractor/per_store_feature.cc (group1::Feature::ArithOps).
ARITHMETIC_FEATURES = (
    "float_mad", "float_add_sub", "float_mul", "float_div_mod", "float_cmp",
    "float_math_func", "float_other_func", "int_mad", "int_add_sub", "int_mul",
    "int_div_mod", "int_cmp", "int_math_func", "int_other_func", "bool_op", "select_op",
)  # fmt: skip


HEAD_NAME = "fused_matmul_add_relu"  # what FuseTIR names the classifier head's fused kernel


@dataclass(frozen=True)
class HeadData:
    """Inputs of the classifier head, its output buffer, and the float64 answer."""

    arguments: list  # x, w, b and the output, as TVM tensors (a compiled PrimFunc writes the last)
    expected: np.ndarray

    @classmethod
    def make(cls, func, device, seed: int = 0) -> "HeadData":
        import tvm

        rng = np.random.default_rng(seed)
        shapes = [tuple(int(d) for d in param.shape) for param in func.params]  # x, w, b, output
        x, w, b = (rng.standard_normal(s, dtype=np.float32) for s in shapes[:3])
        expected = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b, 0.0)
        arrays = [x, w, b, np.zeros(shapes[3], dtype=np.float32)]
        return cls([tvm.runtime.tensor(a, device) for a in arrays], expected)

    def max_error(self) -> float:
        """Largest difference between what the last run wrote and the float64 answer."""
        return float(np.max(np.abs(self.arguments[-1].numpy().astype(np.float64) - self.expected)))


@dataclass(frozen=True)
class Candidate:
    schedule: object  # tvm.s_tir.Schedule with the sampled decisions applied
    decisions: tuple  # the sampled values, in the order the trace made them
    labels: tuple = ()  # what each decision is, for describe()

    def describe(self) -> str:
        parts = []
        labels = self.labels if len(self.labels) == len(self.decisions) else [f"decision {i + 1}" for i in range(len(self.decisions))]
        for label, value in zip(labels, self.decisions):
            parts.append(f"{label} {'x'.join(map(str, value))}" if isinstance(value, tuple) else f"{label} {value}")
        return ", ".join(parts)


def decision_labels(sch, func) -> tuple[str, ...]:
    """A name for each sampled decision of `sch`'s trace, in order: "tile of j" for a
    sample_perfect_tile of loop j (named as in the unscheduled `func`), "choice" for a
    sample_categorical, "decision N" where the loop cannot be named."""
    from tvm import s_tir

    trace = sch.trace
    blocks, loops, labels = {}, {}, []
    fresh = s_tir.Schedule(func)

    def loop_name(block: str, position: int) -> str:
        try:
            return str(fresh.get(fresh.get_loops(fresh.get_sblock(block))[position]).loop_var.name)
        except Exception:  # noqa: BLE001  (a block the unscheduled function lacks: name it by position)
            return f"{block} loop {position + 1}"

    for inst in trace.insts:
        kind = inst.kind.name
        if kind == "GetSBlock":
            blocks[inst.outputs[0]] = str(inst.attrs[0])
        elif kind == "GetLoops" and inst.inputs[0] in blocks:
            for position, rv in enumerate(inst.outputs):
                loops[rv] = (blocks[inst.inputs[0]], position)
        if inst not in trace.decisions:
            continue
        if kind == "SamplePerfectTile" and inst.inputs[0] in loops:
            labels.append(f"tile of {loop_name(*loops[inst.inputs[0]])}")
        elif kind == "SampleCategorical":
            labels.append("choice")
        else:
            labels.append(f"decision {len(labels) + 1}")
    return tuple(labels)


def _decisions(sch) -> tuple:
    trace = sch.trace
    values = []
    for inst in trace.insts:
        if inst in trace.decisions:
            decision = trace.decisions[inst]
            values.append(tuple(int(v) for v in decision) if hasattr(decision, "__len__") else int(decision))
    return tuple(values)


def sample_candidates(func, count: int, design_space, labels: tuple = (), first_seed: int = 1,
                      patience: int = 100) -> list[Candidate]:
    """Up to `count` distinct candidates from `design_space(sch)`, each drawn with its own seed;
    fewer when `patience` draws in a row bring nothing new (a small space is exhausted), and
    RuntimeError when the space holds fewer than two (nothing to rank). `labels` name its
    sampled decisions in order, for the tables."""
    from tvm import s_tir

    found: dict[tuple, Candidate] = {}
    seed = last_new = first_seed
    while len(found) < count and seed - last_new <= patience:
        sch = s_tir.Schedule(func, seed=seed)
        design_space(sch)
        decisions = _decisions(sch)
        if decisions not in found:
            found[decisions] = Candidate(sch, decisions, tuple(labels) or decision_labels(sch, func))
            last_new = seed
        seed += 1
    if len(found) < 2:
        raise RuntimeError(f"the design space yielded only {len(found)} distinct candidates: "
                           "it needs sampling instructions (sample_perfect_tile, sample_categorical) to search")
    return list(found.values())


def measure(candidates: list[Candidate], target, device, arguments, repeats: int = 3) -> np.ndarray:
    """Seconds per run of each candidate: compiled, then the median of `repeats` timings."""
    import tvm

    from ..engine.bench import tvm_timer

    seconds = []
    for candidate in candidates:
        executable = tvm.compile(candidate.schedule.mod, target)
        timer = tvm_timer(executable.mod, device, arguments, min_repeat_ms=10)
        seconds.append(float(np.median([timer() for _ in range(repeats)])))
    return np.array(seconds)


def tune_context(func, target):
    """The MetaSchedule context the feature extractor and the model read: workload, target, threads
    (built without TVM's library of tensor intrinsics: see `tuning.context`)."""
    from .tuning import context

    return context(func, target)


def _measure_candidates(context, candidates: list[Candidate]) -> list:
    from tvm.s_tir import meta_schedule as ms

    args_info = ms.arg_info.ArgInfo.from_prim_func(context.mod["main"])
    return [ms.search_strategy.MeasureCandidate(c.schedule, args_info) for c in candidates]


def fit(context, candidates: list[Candidate], seconds: np.ndarray):
    """MetaSchedule's XGBoost cost model, trained on these candidates' measured times."""
    from tvm.s_tir import meta_schedule as ms

    model = ms.cost_model.XGBModel(
        extractor=ms.feature_extractor.PerStoreFeature(),
        num_warmup_samples=0,  # predict from the first update on (the default guesses at random at first)
        num_tuning_cores=1,
        verbose_eval=0,
    )
    results = [ms.runner.RunnerResult(run_secs=[float(s)], error_msg=None) for s in seconds]
    model.update(context, _measure_candidates(context, candidates), results)
    return model


def predict(model, context, candidates: list[Candidate]) -> np.ndarray:
    """The model's scores: higher means predicted faster (a normalised throughput)."""
    return np.asarray(model.predict(context, _measure_candidates(context, candidates)))


@dataclass(frozen=True)
class RankingQuality:
    spearman: float
    kendall: float
    measurements_to_best: int  # measuring in the model's order, how many until the fastest is found
    expected_random: float  # the same in a random order, on average: (n + 1) / 2
    count: int

    def table(self) -> Table:
        rows = [
            ("Spearman rank correlation, predicted vs measured", f"{self.spearman:.2f}"),
            ("Kendall tau", f"{self.kendall:.2f}"),
            ("candidates held out (measured only to check the model)", str(self.count)),
            ("measurements until the fastest is found, model's order", str(self.measurements_to_best)),
            ("the same in a random order (expected)", f"{self.expected_random:.1f}"),
            ("measurements saved against measuring them all", str(self.count - self.measurements_to_best)),
        ]
        return Table.of(("on the held-out candidates", "value"), rows)


def ranking_quality(scores: np.ndarray, seconds: np.ndarray) -> RankingQuality:
    from scipy import stats

    scores, seconds = np.asarray(scores), np.asarray(seconds)
    throughput = 1.0 / seconds
    order = np.argsort(-scores, kind="stable")
    position = int(np.nonzero(order == int(np.argmin(seconds)))[0][0]) + 1
    return RankingQuality(
        spearman=float(stats.spearmanr(scores, throughput).statistic),
        kendall=float(stats.kendalltau(scores, throughput).statistic),
        measurements_to_best=position,
        expected_random=(len(seconds) + 1) / 2,
        count=len(seconds),
    )


def best_so_far(seconds_in_order: np.ndarray) -> np.ndarray:
    """After k measurements, the fastest time seen so far."""
    return np.minimum.accumulate(np.asarray(seconds_in_order))


def random_order_best_so_far(seconds: np.ndarray, trials: int = 2000, seed: int = 0) -> np.ndarray:
    """`best_so_far` averaged over random measurement orders."""
    rng = np.random.default_rng(seed)
    seconds = np.asarray(seconds)
    return np.mean([best_so_far(seconds[rng.permutation(len(seconds))]) for _ in range(trials)], axis=0)


def arithmetic_counts(context, schedule) -> dict[str, int]:
    """What the feature extractor counts in a program: arithmetic operations executed, summed over stores."""
    from tvm.s_tir import meta_schedule as ms

    args_info = ms.arg_info.ArgInfo.from_prim_func(context.mod["main"])
    rows = ms.feature_extractor.PerStoreFeature().extract_from(context, [ms.search_strategy.MeasureCandidate(schedule, args_info)])[0].numpy()
    logged = rows[:, : len(ARITHMETIC_FEATURES)].astype(np.float64)
    counts = np.sign(logged) * (np.exp2(np.abs(logged)) - 1.0)  # undo log2(1 + x)
    totals = np.rint(counts.sum(axis=0)).astype(np.int64)
    return {name: int(total) for name, total in zip(ARITHMETIC_FEATURES, totals)}


def arithmetic_table(context, schedules: dict, title: str = "") -> Table:
    """Nonzero arithmetic feature totals, one column per schedule."""
    per = {label: arithmetic_counts(context, sch) for label, sch in schedules.items()}
    names = [n for n in ARITHMETIC_FEATURES if any(counts[n] for counts in per.values())]
    rows = [(n, *(_approximate(counts[n]) for counts in per.values())) for n in names]
    return Table.of(("feature (operations executed)", *per), rows, title)


def _approximate(count: int) -> str:
    """Features are stored as float32 logarithms: about six significant digits survive."""
    if count >= 1_000_000:
        return f"{count / 1e6:.1f} million"
    if count >= 1_000:
        return f"{count / 1e3:.0f} thousand"
    return str(count)
