"""``deploy flow test`` with mock keys that look like numbers but are not ASCII decimals."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from deployer.cli import main as cli_main
from deployer.errors import ExitCode

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("key", ["\u00b2", "\uff11", "0-\u00b3", "\u0661"])
def test_mock_keys_in_other_digits_name_the_line(tmp_path: Path, key: str) -> None:
    mocks = tmp_path / "mocks.yaml"
    mocks.write_text(f'TestCases:\n  A: {{StartJob: R}}\nMockedResponses:\n  R:\n'
                     f'    "{key}": {{Return: {{Body: {{}}}}}}\n', encoding="utf-8")
    result = CliRunner().invoke(cli_main.cli, ["-C", str(ROOT), "flow", "test",
                                               "templates/flow.yaml.j2", "--mocks", str(mocks)])
    assert result.exit_code == ExitCode.INVALID_INPUT, result.stderr
    assert f"{mocks}:5" in result.stderr and "invocation indexes" in result.stderr


def test_an_endless_input_file_is_refused_not_read_forever() -> None:
    result = CliRunner().invoke(cli_main.cli, [
        "-C", str(ROOT), "flow", "test", "templates/flow.yaml.j2", "--mocks",
        str(ROOT / "tests" / "fixtures" / "flows" / "seed-mocks.yaml"), "--case", "HappyPath",
        "--input", "@/dev/zero"])
    assert result.exit_code == ExitCode.INVALID_INPUT, result.stderr
    assert "/dev/zero" in result.stderr and "MiB" in result.stderr
