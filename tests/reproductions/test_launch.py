"""Ctrl-C while the CLI loads (reproductions/launch.py): one line and status 130, not a traceback."""

import builtins

import pytest

from dpverify.reproductions import cli, launch


def test_ctrl_c_while_loading_says_so_and_exits_130(monkeypatch, capsys):
    real_import = builtins.__import__

    def interrupted(name, *args, **kwargs):   # the signal arrives while the harness's modules import
        if name == "dpverify.reproductions.cli":
            raise KeyboardInterrupt
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    with pytest.raises(SystemExit) as done:
        launch.main(["--help"])
    assert done.value.code == 130 == cli.EXIT_INTERRUPTED
    assert capsys.readouterr().err == launch.INTERRUPTED_WHILE_LOADING + "\n"


def test_launch_runs_the_cli(capsys):
    with pytest.raises(SystemExit) as done:
        launch.main(["list"])
    assert done.value.code == 0
    assert "dpdo-nc" in capsys.readouterr().out
