"""The course rehearsed on a scratch copy: the bundled course copied (`scratch_course`), the sample
submissions that stand in for a class (`samples`), the instructor's demo (`demo`), and the class
run's and the cost model's benchmarks (`benchmark`, `cost_model_benchmark`)."""
