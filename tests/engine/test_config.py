"""config.py: every setting has a default and a description, and the CLI exposes each one."""
from __future__ import annotations

import dataclasses

from autograder.commands.grading import config_from
from autograder.engine.config import GraderConfig
from autograder.cli import build_parser


def test_every_setting_has_a_default_and_help():
    described = GraderConfig.describe()
    assert [name for name, _, _ in described] == [f.name for f in dataclasses.fields(GraderConfig)]
    for name, _, help_text in described:
        assert help_text and help_text[0].isupper(), name
    assert GraderConfig().student_timeout_s <= 60  # the ceiling for the default


def test_command_line_flags_reach_the_config():
    args = build_parser().parse_args(
        ["grade-schedule", "tile-fused-conv", "f.py", "--student-timeout-s", "5", "--timing-rounds", "4",
         "--no-measure-speed", "--seed", "11", "--rpc", "127.0.0.1:9190", "--key", "cpu"]
    )
    config = config_from(args)
    assert config.student_timeout_s == 5.0 and config.timing_rounds == 4 and config.seed == 11
    assert config.measure_speed is False
    assert (config.rpc_tracker, config.rpc_key) == ("127.0.0.1:9190", "cpu")
    assert dataclasses.replace(config, seed=None).as_dict()["seed"] is None


def test_grading_run_overrides_are_typed_and_only_the_given_ones():
    from autograder.commands.grading import config_values

    given = build_parser().parse_args(["grade", "tiling", "--seed", "11", "--no-measure-speed", "--rpc", "h:9190", "--key", "k"])
    assert config_values(given) == {"seed": 11, "measure_speed": False, "rpc_tracker": "h:9190", "rpc_key": "k"}
    assert config_values(build_parser().parse_args(["grade", "tiling"])) == {}
