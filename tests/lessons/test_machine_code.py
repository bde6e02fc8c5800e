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
