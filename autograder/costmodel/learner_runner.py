"""Child process: a student's feature function and model, confined, answering fit and predict.

Usage (by `learner.LearnerChild` only): python -m autograder.costmodel.learner_runner FD
MEMORY_MB NICE, in a directory holding learner.py (the answer cell's source) and pool.json (the
table's candidate rows: numbers only, no times).

It confines itself as a schedule's student child does, by the same code
(engine/submission_child.py): a world of its own, then Landlock, seccomp and limits, before the
student's code runs. It imports numpy
only (no TVM: a learner gets no handle on a program, a timer or a table). Requests arrive on
stdin, one JSON object a line, and each is answered on the channel:

    {"id": N, "fit": [indices], "seconds": [times]}   -> {"kind": "fitted", "id": N}
    {"id": N, "predict": [indices]}                    -> {"kind": "scores", "id": N, "scores": [...]}

What this child says about what the student's code returned (a shape, a NaN) is only wording:
it runs beside the student's code, so the parent checks every answer again.
"""
from __future__ import annotations

import json
import sys

from ..engine import submission_child

SUBMISSION = "learner.py"
POOL = "pool.json"
PREIMPORTED = (
    "bisect", "collections", "copy", "dataclasses", "functools", "heapq", "itertools", "math", "operator",
    "random", "statistics", "typing", "warnings", "numpy", "numpy.linalg", "numpy.random",
)


_leave = submission_child.leave


def _student_error(error: BaseException) -> str:
    """The error as the student should see it: their own lines (of the answer cell) and its text."""
    return submission_child.student_traceback(error, SUBMISSION)


def describe_answer(value, count: int) -> str | None:
    """Why `value` is not `count` finite scores (None when it is), in the student's terms."""
    import numpy as np

    try:
        array = np.asarray(value)
    except Exception as error:  # noqa: BLE001
        return f"predict returned something numpy cannot read as an array ({type(error).__name__})"
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        return f"predict returned an array of {array.dtype}, not numbers"
    if array.ndim != 1 and not (array.ndim == 2 and array.shape[1] == 1):
        return f"predict returned an array of shape {array.shape}: it must be one score a candidate, shape ({count},)"
    if array.size != count:
        return f"predict returned {array.size} scores for {count} candidates"
    if not np.all(np.isfinite(array.astype(np.float64))):
        return "predict returned NaN or infinite scores (a division by zero? a log of 0?)"
    return None


def main(argv: list[str]) -> None:
    child = submission_child.SubmissionChild(argv[0], int(argv[2]), SUBMISSION)
    send = child.send
    with open(POOL, encoding="utf-8") as handle:
        pool_rows = json.load(handle)
    import numpy as np

    pool = np.asarray(pool_rows, dtype=np.int64)
    send({"kind": "stage", "stage": "learner", "confinement": child.confine(PREIMPORTED, int(argv[1]))})

    try:
        namespace = child.run("learner")
        feature_function, model_class = namespace.get("features"), namespace.get("Model")
        if not callable(feature_function) or not callable(model_class):
            missing = [n for n, v in (("features(candidates)", feature_function), ("class Model", model_class)) if not callable(v)]
            send({"kind": "missing", "message": f"the answer cell does not define {' and '.join(missing)}"})
            _leave()
        X = feature_function(pool.copy())
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] != len(pool):
            send({"kind": "bad_features", "message": f"features() returned shape {X.shape}: it must be one row per "
                  f"candidate, shape ({len(pool)}, number of features)"})
            _leave()
        if not np.all(np.isfinite(X)):
            send({"kind": "bad_features", "message": "features() returned NaN or infinite values"})
            _leave()
    except MemoryError:
        send({"kind": "memory", "message": "your code ran out of memory (the grader's memory limit)"})
        _leave()
    except BaseException as error:  # noqa: BLE001  (SystemExit too: the student's code raised it)
        send({"kind": "exception", "message": "while computing the features: " + _student_error(error)})
        _leave()

    model = None
    for line in sys.stdin:
        try:
            request = json.loads(line)
            ident = int(request["id"])
        except (ValueError, KeyError, TypeError):
            _leave(3)
        try:
            if "fit" in request:
                model = model_class()
                model.fit(X[np.asarray(request["fit"], dtype=np.int64)].copy(), np.asarray(request["seconds"], dtype=np.float64))
                send({"kind": "fitted", "id": ident})
            else:
                indices = np.asarray(request["predict"], dtype=np.int64)
                scores = model.predict(X[indices].copy())
                problem = describe_answer(scores, len(indices))
                if problem:
                    send({"kind": "bad_scores", "id": ident, "message": problem})
                    _leave()
                send({"kind": "scores", "id": ident, "scores": [float(s) for s in np.asarray(scores, dtype=np.float64).ravel()]})
        except MemoryError:
            send({"kind": "memory", "message": "your code ran out of memory (the grader's memory limit)"})
            _leave()
        except BaseException as error:  # noqa: BLE001
            doing = "fit" if "fit" in request else "predict"
            send({"kind": "exception", "message": f"in Model.{doing}: " + _student_error(error)})
            _leave()
    _leave()


if __name__ == "__main__":
    main(sys.argv[1:])
