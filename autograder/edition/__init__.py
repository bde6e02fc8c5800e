"""The student edition: what students receive, in one folder, every file checked for what must not leak."""
