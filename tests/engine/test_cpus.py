"""cpus.py: --mcpu names an LLVM CPU this host can run; anything else is a usage error."""
from __future__ import annotations

import pytest

from autograder.engine.cpus import UnknownCPU, cpu_name, cpu_target


def host_cpu() -> str:
    import tvm

    return str(tvm.target.Target.from_device(tvm.cpu()).attrs["mcpu"])


def test_no_name_is_this_hosts_own_cpu():
    assert cpu_name(cpu_target(None)) == host_cpu()
    assert cpu_name(cpu_target(host_cpu())) == host_cpu()


def test_an_older_cpu_of_the_same_family_compiles_for_that_cpu():
    from tvm.target import codegen

    if "avx2" not in codegen.llvm_get_cpu_features(cpu_target(None)):
        pytest.skip("haswell's AVX2 does not run on this host")
    target = cpu_target("haswell")
    assert cpu_name(target) == "haswell"
    assert "avx512f" not in codegen.llvm_get_cpu_features(target)


def test_a_name_llvm_does_not_know_is_refused_with_examples():
    with pytest.raises(UnknownCPU, match="does not know a CPU named 'pentium-9000'.*haswell"):
        cpu_target("pentium-9000")


def test_a_cpu_whose_instructions_this_host_lacks_is_refused_naming_them():
    from tvm.target import codegen

    if "amx-tile" in codegen.llvm_get_cpu_features(cpu_target(None)):
        pytest.skip("this host runs AMX: sapphirerapids code would run here")
    with pytest.raises(UnknownCPU, match="cannot run code compiled for 'sapphirerapids': it lacks .*amx"):
        cpu_target("sapphirerapids")


def test_tuning_flags_are_not_mistaken_for_missing_instructions():
    """haswell's feature list has tuning flags (false-deps-popcnt, ...) a newer host lacks: fine."""
    from tvm.target import codegen

    if "avx2" not in codegen.llvm_get_cpu_features(cpu_target(None)):
        pytest.skip("no AVX2 here")
    cpu_target("haswell")
