"""The code behind the lesson notebooks in `lessons/`.

Each module serves one part of a lesson, so that a notebook reads as prose plus short calls:

- `session`: one-thread timing set-up, the host target, whether a GPU is present
- `workload_data`: inputs, reference output and correctness check for the conv workload
- `timing`: interleaved timing of executables and Relax VMs, with a comparison table
- `graph_level`: fused and unfused Relax builds; the tensors that cross kernel boundaries
- `schedules`: the bundled example schedules, applied and compiled
- `ir_views`: loop nests, their diff, buffer sizes after TVM's compaction passes
- `machine_code`: instruction counts in the generated assembly
- `cost_model`: sampled candidates, MetaSchedule's XGBoost model, ranking quality
- `gpu`: CUDA builds without a GPU, kernel source and its facts (threads, shared bytes, barriers),
  TVM's `VerifyGPUCode` limits, timing where a GPU exists
- `names`: the names that moved since the TVM paper, checked against the installed TVM
- `plots`, `tables`: matplotlib figures and small Markdown tables
- `figures`: lesson 2's tile grid and input window, loop nests as a diagram (lessons 2 and 3), the roofline
- `roofline`: this core's FMA peak and streaming bandwidth, measured; a schedule's modelled traffic
- `exercises`: the instant checks of the lessons' exercises (they never raise)
- `verdicts`: lesson 2's measured verdicts in words, decided by this run's numbers

Timings in the lessons use one TVM thread: on the shared two-core course machines,
two-thread timings of the same binary drifted 2-3x over minutes. The thread pool reads
`TVM_NUM_THREADS` when TVM starts, so it is set here, before any lesson module imports TVM;
`session.start()` checks that it took effect. TVM_BIND_THREADS=0 keeps the pool from binding
the kernel to one core, which everything the kernel starts would inherit (engine/threads.py).
"""
import os

os.environ.update({"TVM_NUM_THREADS": "1", "TVM_BIND_THREADS": "0"})
