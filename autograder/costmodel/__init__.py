"""The cost-model assignment: students write the learned cost model that ranks schedule candidates.

- `space`: the workload (the classifier head, relu(x @ w + b), at a shape of the student's own)
  and its design space, every candidate one row of decisions (numpy: all a learner sees);
- `table`: each candidate's time, measured on the machine that grades with the engine's timer,
  in a child, cached privately per machine, shape and TVM version, and audited against drift;
- `scoring`: the metrics (TenSet's top-k score, pairwise accuracy, a replayed budgeted search),
  each scaled between the random expectation and the instructor's model; numpy only;
- `baseline`: the public baseline the self-check shows (far from full credit), and the interface
  every learner obeys; the full-credit bar is the instructor's solution, read from the course's
  source notebook by the class run, never shipped in this package;
- `learner_runner` (a confined child) and `learner` (its parent): the student's untrusted
  feature function and model, fed numpy only, every answer validated;
- `grade`: one submission's two parts (ranking, search) against the instructor's solution run the
  same way, a grader fault pending, never a zero; and the self-check, which gives no points.

The workload is not the tiling assignment's: that one's answers are convolution schedules, and
no point of this space is one (see `space`).
"""

NAME = "learned-cost-model"  # the syllabus's `problem` of the assignment, and the grading plan's answer kind's
PARTS = ("ranking", "search")  # its test cells' parts
