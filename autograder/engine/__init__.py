"""The grading engine: one submission in, one Result out.

    pipeline        the trusted parent: no TVM, never runs student code, holds the verdict
    sandbox         child processes (spawned or forked), their bounded channel, limits, clean-up
    world           each untrusted child's own namespaces and root, entered first thing
    confine         no privilege, Landlock and seccomp, applied by each untrusted child
    preflight       the journal graded confined once, before anyone else is
    student_runner  untrusted child: runs schedule(sch), sends the trace
    submission_child  the start every child running a submission shares (this one, costmodel's learner)
    messages, wire  what the children send, as typed records read field by field (whose fault garbage is)
    trace_schema    what a trace may contain, field by field (plain Python, no TVM)
    replay          a trace to and from JSON, replayed on a fresh workload
    evaluate        trusted child: replays the trace, checks, compiles, judges what ran
    measure         untrusted runner (a confined fork of the evaluator): runs and times
    checks          structure: interface, fusion, GPU binding and limits, host code
    bench, runners  interleaved timing; where compiled code runs (here, or behind RPC)
    report          the Result, whose text is made visible (untrusted_text) as it is made
    config          the grader's settings
    threads         the environment of a process that runs TVM: its thread count, never bound to a core
"""
