"""The grading engine: one submission in, one Result out.

    pipeline        the trusted parent: no TVM, never runs student code
    sandbox         child processes, their bounded channel, limits and confinement
    student_runner  untrusted child: runs schedule(sch), sends the trace
    trace_schema    what a trace may contain, field by field (plain Python)
    evaluate        trusted child: replays the trace, checks, compiles
    measure         untrusted child: runs the compiled code, times it
    checks, bench, runners, report, config: structure, timing, devices, the Result, settings
"""
