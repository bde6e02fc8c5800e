from autograder.lessons import names


def test_every_new_name_resolves_in_the_installed_tvm():
    missing = [s.rename.new_path for s in names.check() if not s.new_found]
    assert not missing, f"names.py points at names the installed TVM lacks: {missing}"


def test_old_names_are_gone_or_marked_deprecated():
    statuses = {s.rename.old_path: s.old_status for s in names.check()}
    assert statuses["tvm.relay"] == "gone"
    assert statuses["nnvm"] == "gone"  # the paper's graph IR
    assert statuses["tvm.relax.TensorStructInfo"] == "gone"
    assert statuses["tvm.build"] == "deprecated alias"
    assert set(statuses.values()) <= {"gone", "deprecated alias", "still present"}


def test_resolve_walks_modules_then_attributes():
    import tvm

    assert names.resolve("tvm.s_tir.Schedule.get_sblock") is tvm.s_tir.Schedule.get_sblock
    assert names.resolve("tvm.no_such_module.thing") is None
    assert names.resolve("no_such_top_level_package") is None


def test_table_reports_each_rename():
    import tvm

    table = names.table()
    assert len(table.rows) == len(names.RENAMES)
    assert f"in TVM {tvm.__version__}" in table.columns
    assert all(cell.startswith("found") for cell in table.column("new name, checked"))
