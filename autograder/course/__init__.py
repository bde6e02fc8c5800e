"""The instructor's side of the course: the grading run over an nbgrader course root.

course_dir (config), submissions, workers, gradebook_sync, summary and grading_run make up
`tvm-course grade`; samples, scratch_course, demo and benchmark use it on the bundled samples.
"""
