"""The course's side of nbgrader: trusted scoring, grading plans, questions, notebook helpers.

Nothing is imported here on purpose: the student's kernel imports `kernel_side` and must not
pay for nbgrader; course/nbgrader_config.py imports `preprocessors`.
"""
