import pytest

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
    assert classes[machine_code.FMA_CLASS] == 2
    assert classes["arithmetic on single floats (...ss)"] == 1
    assert classes[machine_code.GATHER_CLASS] == 1
    assert classes["vector loads and stores (movups, movaps)"] == 1
    widths = machine_code.count_registers(ASSEMBLY)
    assert widths == {"zmm": 4}  # the two FMAs, the gather (its widest operand), the store


SSE = """
main:
	movups	(%rdi), %xmm0
	mulps	%xmm1, %xmm0
	addps	%xmm0, %xmm2
	maxps	%xmm3, %xmm2
	movaps	%xmm2, (%rsi)
"""


def test_sse_code_is_counted_and_named():
    counts = machine_code.classify(machine_code.count_mnemonics(SSE))
    assert counts[machine_code.SEPARATE_CLASS] == 2 and counts[machine_code.FMA_CLASS] == 0
    assert counts["vector loads and stores (movups, movaps)"] == 2
    widths = machine_code.count_registers(SSE)
    profile = {**counts, **{label: widths[w] for label, w in machine_code.REGISTER_CLASSES.items()}}
    assert machine_code.instruction_set(profile) == "SSE"


def test_journal_tiles_are_vectorised_with_gathers_and_the_fix_removes_them(lab, fused_func):
    builds = {
        name: schedules.compile_schedule(fused_func, schedule, lab.target)
        for name, schedule in (
            ("unscheduled", None),
            ("journal", schedules.example("journal")),
            ("fixed", schedules.journal_with_vectorized_tail),
        )
    }
    gathers = {name: machine_code.classify(machine_code.instruction_counts(e))[machine_code.GATHER_CLASS] for name, e in builds.items()}
    assert gathers["unscheduled"] == 0 and gathers["fixed"] == 0
    table = machine_code.class_table(builds)
    assert table.columns[1:] == ("unscheduled", "journal", "fixed")
    assert table.rows[-1][0] == "vector instruction set of the code"


@pytest.mark.parametrize("mcpu,isa,nothing", [
    ("x86-64-v2", "SSE", "fused multiply-adds on vectors"),
    ("haswell", "AVX2", "vector float instructions on 512-bit zmm registers"),
])
def test_each_instruction_set_is_counted_and_the_zeros_are_named(fused_func, mcpu, isa, nothing):
    from tvm.target import codegen

    from autograder.engine.cpus import cpu_target

    host = cpu_target(None)
    if not machine_code.is_x86(machine_code.target_architecture(host)) or (
            mcpu == "haswell" and "avx2" not in codegen.llvm_get_cpu_features(host)):
        pytest.skip(f"this host cannot run {mcpu} code")
    target = cpu_target(mcpu)
    table = machine_code.class_table({"unscheduled": schedules.compile_schedule(fused_func, None, target)}, "", target)
    assert table.rows[-1] == ("vector instruction set of the code", isa)
    assert table.note.startswith("Counted nothing in any build here: ") and nothing in table.note


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


def test_the_host_table_says_when_it_counts_nothing_here(lab, fused_func):
    build = {"unscheduled": schedules.compile_schedule(fused_func, None, lab.target)}
    table = machine_code.class_table(build, "", lab.target)
    if not machine_code.is_x86(machine_code.target_architecture(lab.target)):
        assert table.note.startswith("Note: this code is for ")
    else:
        assert not table.note or table.note.startswith("Counted nothing in any build here: ")
        assert int(table.column("unscheduled")[list(machine_code.INSTRUCTION_CLASSES).index("vector loads and stores (movups, movaps)")]) > 0
