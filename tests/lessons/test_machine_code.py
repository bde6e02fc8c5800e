from autograder.lessons import machine_code, schedules

ASSEMBLY = """
main:
\t.p2align 4
\tvfmadd231ps\t%zmm1, %zmm2, %zmm3
\tvfmadd231ps\t%zmm4, %zmm5, %zmm6
\tvfmadd132ss\t%xmm1, %xmm2, %xmm3
\tvgatherqps\t(%rax,%zmm0), %ymm1 {%k1}
\tvmovups\t%zmm0, (%rdi)
.LBB0_2:
\t# a comment
\taddq\t$64, %rdi
"""


def test_mnemonics_are_counted_from_instruction_lines_only():
    counts = machine_code.count_mnemonics(ASSEMBLY)
    assert counts == {"vfmadd231ps": 2, "vfmadd132ss": 1, "vgatherqps": 1, "vmovups": 1, "addq": 1}
    classes = machine_code.classify(counts)
    assert classes["fused multiply-adds on vectors (vfmadd...ps)"] == 2
    assert classes["fused multiply-adds on single floats (vfmadd...ss)"] == 1
    assert classes["gathers and scatters"] == 1
    assert classes["vector loads and stores"] == 1


def test_journal_tiles_are_vectorised_with_gathers_and_the_fix_removes_them(lab, fused_func):
    builds = {
        name: schedules.compile_schedule(fused_func, schedule, lab.target)
        for name, schedule in (
            ("unscheduled", None),
            ("journal", schedules.example("journal")),
            ("fixed", schedules.journal_with_vectorized_tail),
        )
    }
    gathers = {name: machine_code.classify(machine_code.instruction_counts(e))["gathers and scatters"] for name, e in builds.items()}
    assert gathers["unscheduled"] == 0 and gathers["fixed"] == 0
    table = machine_code.class_table(builds)
    assert table.columns[1:] == ("unscheduled", "journal", "fixed")


def test_the_architecture_comes_from_the_target_triple_else_this_machine():
    import platform

    import tvm

    arm = tvm.target.Target({"kind": "llvm", "mtriple": "aarch64-linux-gnu"})
    assert machine_code.target_architecture(arm) == "aarch64"
    x86 = tvm.target.Target({"kind": "llvm", "mtriple": "x86_64-linux-gnu"})
    assert machine_code.target_architecture(x86) == "x86_64"
    assert machine_code.target_architecture() == platform.machine().lower()
    assert machine_code.is_x86("x86_64") and machine_code.is_x86("AMD64") and not machine_code.is_x86("aarch64")


def test_on_a_cpu_that_is_not_x86_the_table_says_its_counts_mean_nothing():
    import tvm

    arm = tvm.target.Target({"kind": "llvm", "mtriple": "aarch64-linux-gnu"})
    table = machine_code.class_table({}, "title", arm)
    assert table.note.startswith("Note: this code is for aarch64, not x86.")
    assert "every count is 0" in table.note
    assert table.note in table._repr_markdown_() and table.note in str(table)
    x86 = tvm.target.Target({"kind": "llvm", "mtriple": "x86_64-linux-gnu"})
    assert machine_code.class_table({}, "title", x86).note == ""
    assert machine_code.non_x86_note("x86_64") == ""


def test_the_host_table_has_a_note_exactly_when_the_host_is_not_x86(lab, fused_func):
    build = {"unscheduled": schedules.compile_schedule(fused_func, None, lab.target)}
    table = machine_code.class_table(build, "", lab.target)
    assert bool(table.note) == (not machine_code.is_x86(machine_code.target_architecture(lab.target)))
    if not table.note:
        assert int(table.rows[-1][1]) > 0  # vector loads and stores: x86 code has them
