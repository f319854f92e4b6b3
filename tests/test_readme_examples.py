"""The README's examples marked `<!-- readme-example -->` run as written, from the repository root: each bash line
exits 0, or the status its trailing `# exit N` comment names; each Python block runs."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"<!-- readme-example -->\n```(bash|python)\n(.*?)```", re.S)


def examples() -> list[tuple[str, str]]:
    return BLOCK.findall((REPO / "README.md").read_text())


def test_the_readme_has_examples():
    kinds = [kind for kind, _ in examples()]
    assert kinds.count("bash") >= 2 and kinds.count("python") >= 1


@pytest.mark.parametrize("kind, code", examples(), ids=lambda value: value.splitlines()[0][:60] if "\n" in value else value)
def test_readme_example_runs(kind, code):
    if kind == "python":
        result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr
        return
    for line in filter(None, (line.strip() for line in code.splitlines())):
        expected = int(re.search(r"# exit (\d+)", line).group(1)) if "# exit" in line else 0
        command = line.split("#")[0].replace("dpverify ", f"{sys.executable} -m dpverify ", 1)
        result = subprocess.run(command, shell=True, cwd=REPO, capture_output=True, text=True, timeout=600)
        assert result.returncode == expected, (line, result.stdout[-2000:], result.stderr[-2000:])
