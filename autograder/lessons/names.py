"""Names that moved between the TVM paper (2018), the 2022 tutorials and the installed TVM.

The graph level changed IRs, not just names: the paper's graph IR was NNVM's computation graph;
Relay later replaced NNVM, and Relax, a new IR (not Relay renamed), has replaced Relay since.

Each row names the old spelling, the current one, and a dotted path for each that `check()`
resolves against the installed package, so the table cannot quietly go stale.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from .tables import Table


@dataclass(frozen=True)
class Rename:
    old: str  # as a reader meets it in the paper or an old tutorial
    new: str  # as it is spelled in the installed TVM
    old_path: str  # dotted path whose presence `check()` tests
    new_path: str
    note: str = ""


RENAMES: tuple[Rename, ...] = (
    Rename("NNVM computation graph (the paper's graph IR)", "relax", "nnvm", "tvm.relax", "the graph level: NNVM, later Relay, now Relax"),
    Rename("relay (the graph IR after NNVM)", "relax", "tvm.relay", "tvm.relax", "Relax is a new IR, not Relay renamed"),
    Rename("graph_executor", "relax.VirtualMachine", "tvm.contrib.graph_executor", "tvm.relax.VirtualMachine"),
    Rename("tvm.tir (tensor IR)", "tvm.tirx", "tvm.tir", "tvm.tirx", "the tensor level"),
    Rename("tvm.tir.Schedule", "tvm.s_tir.Schedule", "tvm.tir.Schedule", "tvm.s_tir.Schedule"),
    Rename("sch.get_block", "sch.get_sblock", "tvm.s_tir.Schedule.get_block", "tvm.s_tir.Schedule.get_sblock"),
    Rename("T.block (TVMScript)", "T.sblock", "tvm.script.tirx.block", "tvm.script.tirx.sblock"),
    Rename("from tvm.script import tir as T", "from tvm.script import tirx as T", "tvm.script.tir", "tvm.script.tirx"),
    Rename("te.create_schedule, s[C].split", "te.create_prim_func, then s_tir.Schedule", "tvm.te.create_schedule", "tvm.te.create_prim_func",
           "compute and schedule still separate"),
    Rename("tvm.autotvm (templates and tuners)", "tvm.s_tir.meta_schedule", "tvm.autotvm", "tvm.s_tir.meta_schedule", "search over sampled schedules"),
    Rename("tvm.auto_scheduler.XGBModel", "meta_schedule.cost_model.XGBModel", "tvm.auto_scheduler", "tvm.s_tir.meta_schedule.cost_model.XGBModel",
           "the learned cost model"),
    Rename("tvm.meta_schedule", "tvm.s_tir.meta_schedule", "tvm.meta_schedule", "tvm.s_tir.meta_schedule"),
    Rename("tvm.dlight", "tvm.s_tir.dlight", "tvm.dlight", "tvm.s_tir.dlight"),
    Rename("tvm.build", "tvm.compile", "tvm.build", "tvm.compile"),
    Rename("tvm.lower", "tvm.tirx.get_tir_pipeline", "tvm.lower", "tvm.tirx.get_tir_pipeline"),
    Rename("tvm.nd.array", "tvm.runtime.tensor", "tvm.nd.array", "tvm.runtime.tensor"),
    Rename("relax.TensorStructInfo", "relax.TensorType", "tvm.relax.TensorStructInfo", "tvm.relax.TensorType", "changed since the 2023 Relax tutorials"),
    Rename("tvm.contrib.nvcc", "tvm.support.nvcc", "tvm.contrib.nvcc", "tvm.support.nvcc"),
)


def resolve(path: str):
    """The object at dotted `path` in the installed package, or None where there is none."""
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            found = getattr(found, attribute, None)
            if found is None:
                return None
        return found
    return None


def _is_deprecated(obj) -> bool:
    return "deprecated" in (getattr(obj, "__doc__", None) or "").lower()


@dataclass(frozen=True)
class RenameStatus:
    rename: Rename
    new_found: bool
    old_status: str  # "gone", "deprecated alias" or "still present"


def check() -> list[RenameStatus]:
    statuses = []
    for rename in RENAMES:
        old = resolve(rename.old_path)
        if old is None:
            old_status = "gone"
        elif _is_deprecated(old):
            old_status = "deprecated alias"
        else:
            old_status = "still present"
        statuses.append(RenameStatus(rename, resolve(rename.new_path) is not None, old_status))
    return statuses


def table() -> Table:
    """The renames, each checked against the installed TVM as the table is built."""
    import tvm

    rows = [
        (
            f"`{s.rename.old}`",
            f"`{s.rename.new}`",
            ("found" if s.new_found else "MISSING") + f" (`{s.rename.new_path}`)",
            s.old_status,
            s.rename.note,
        )
        for s in check()
    ]
    return Table.of(
        ("in the paper / old tutorials", f"in TVM {tvm.__version__}", "new name, checked", "old name, checked", "note"),
        rows,
    )
