"""``shuffle-acct plot`` (needs the optional ``[plot]`` extra, matplotlib)."""

from __future__ import annotations

import builtins

import pytest
from click.testing import CliRunner

from shuffle_accountant.cli import main

MAGIC = {"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF"}


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_plot_writes_non_empty_image(tmp_path, fmt):
    pytest.importorskip("matplotlib")
    out = tmp_path / f"fig.{fmt}"
    r = CliRunner().invoke(main, ["plot", "--n", "1e3:1e5:3:log", "--eps0", "1", "-m", "clones",
                                  "-m", "blanket-hoeffding", "-o", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    data = out.read_bytes()
    assert len(data) > 1000 and data.startswith(MAGIC[fmt])


def test_plot_against_eps0_with_explicit_format(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "fig.img"
    r = CliRunner().invoke(main, ["plot", "--n", "1e4", "--eps0", "0.5:4:4", "--k", "4", "-m", "krr",
                                  "-o", str(out), "--image-format", "svg", "--no-progress"])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "krr" in text and "local privacy" in text


def test_plot_both_axes_ranged_is_bad_input(tmp_path):
    pytest.importorskip("matplotlib")
    r = CliRunner().invoke(main, ["plot", "--n", "1e3,1e4", "--eps0", "1,2", "-o", str(tmp_path / "f.png")])
    assert r.exit_code == 2 and "not both" in r.output


def test_without_matplotlib_a_clear_message(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ModuleNotFoundError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    r = CliRunner().invoke(main, ["plot", "--n", "1e3,1e4", "--eps0", "1", "-o", str(tmp_path / "f.png")])
    assert r.exit_code != 0
    assert "pip install 'shuffle-accountant[plot]'" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "f.png").exists()
