from autograder.lessons.tables import Table, human_bytes, milliseconds


def test_markdown_has_title_header_rule_and_escaped_cells():
    table = Table.of(("name", "size"), [("a|b", 3)], title="Sizes")
    lines = table._repr_markdown_().splitlines()
    assert lines[0] == "**Sizes**"
    assert lines[2] == "| name | size |"
    assert lines[3] == "| --- | --- |"
    assert lines[4] == "| a\\|b | 3 |"


def test_text_aligns_columns_and_column_lookup():
    table = Table.of(("variant", "time"), [("unscheduled", "1 ms"), ("x", "22 ms")])
    text = str(table).splitlines()
    assert text[0].index("time") == text[2].index("1 ms") == text[3].index("22 ms")
    assert table.column("time") == ["1 ms", "22 ms"]


def test_human_bytes_and_milliseconds():
    assert human_bytes(256) == "256 B"
    assert human_bytes(1024) == "1.0 KiB"
    assert human_bytes(16 * 224 * 224 * 4) == "3.1 MiB"
    assert milliseconds(0.000456) == "0.456 ms"
