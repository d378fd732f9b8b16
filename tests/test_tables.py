"""``shuffle-acct table`` / ``check``: grids, formats, the golden round trip."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from shuffle_accountant import __version__, tables
from shuffle_accountant.cli import main
from shuffle_accountant.errors import InvalidParameter

AXES = ["--n", "1e3:1e5:3:log", "--eps0", "0.4,1", "--delta", "1e-6"]
METHODS = ["-m", "clones", "-m", "blanket-hoeffding", "-m", "erlingsson", "-m", "binary-rr-lower"]


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    d = tmp_path_factory.mktemp("golden")
    paths = {}
    for fmt in ("json", "csv"):
        p = d / f"golden.{fmt}"
        r = run("table", *AXES, *METHODS, "--format", fmt, "-o", str(p), "--no-progress")
        assert r.exit_code == 0, r.output
        paths[fmt] = p
    return paths


def test_axis_ranges():
    assert tables.parse_axis("n", "1e3:1e9:7:log") == (1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9)
    assert tables.parse_axis("eps0", "0.5:2:4") == (0.5, 1.0, 1.5, 2.0)
    assert tables.parse_axis("delta", "1e-6,1e-9") == (1e-6, 1e-9)
    assert tables.parse_axis("delta", {"start": 1e-9, "stop": 1e-6, "num": 4, "scale": "log"}) == (1e-9, 1e-8, 1e-7, 1e-6)
    for bad in ("1:2", "1:2:x", "0:1:3:log", "a,b", "1:2:3:cubic"):
        with pytest.raises(InvalidParameter):
            tables.parse_axis("x", bad)


def test_every_cell_has_kind_and_header_records_version_and_grid(golden):
    doc = json.loads(golden["json"].read_text())
    assert doc["version"] == __version__ and doc["inputs"]["n"] == [1000, 10000, 100000]
    assert doc["tool"] == "shuffle-acct" and doc["command"] == "table"
    assert len(doc["results"]) == 3 * 2 * 4
    kinds = {c["method"]: set() for c in doc["results"]}
    for c in doc["results"]:
        kinds[c["method"]].add(c["kind"])
    assert kinds["clones"] == {"upper"} and kinds["binary-rr-lower"] == {"lower"}
    assert kinds["erlingsson"] == {"upper", "not applicable"}
    text = golden["csv"].read_text()
    assert text.startswith(f"# shuffle-accountant {__version__} table of epsilon\n# grid: ")
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    assert {r["kind"] for r in rows} == {"upper", "lower", "not applicable"}


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_generated_table_checks_clean(golden, fmt):
    r = run("check", str(golden[fmt]), "--no-progress")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("ok: 24 cells agree")


def _perturb(path, out, method, n, factor):
    doc = json.loads(path.read_text())
    for c in doc["results"]:
        if c["method"] == method and c["n"] == n and c["eps0"] == 1.0:
            c["value"] *= factor
    out.write_text(json.dumps(doc))


@pytest.mark.parametrize("factor,verdict", [(1.001, "tighter"), (0.999, "looser")])
@pytest.mark.parametrize("method", ["clones", "blanket-hoeffding"])
def test_perturbed_upper_bound_fails_and_names_the_cell(golden, tmp_path, factor, verdict, method):
    # golden * 1.001: the recomputed upper bound is now *smaller* than the golden one -> tighter
    p = tmp_path / "g.json"
    _perturb(golden["json"], p, method, 10000, factor)
    r = run("check", str(p), "--no-progress")
    assert r.exit_code == 3, r.output
    assert "FAIL: 1 of 24 cells differ" in r.output
    row = next(line for line in r.output.splitlines() if line.startswith("10000"))
    assert method in row and "upper" in row and verdict in row and "1 " in row


def test_perturbed_lower_bound_directions(golden, tmp_path):
    p = tmp_path / "g.json"
    _perturb(golden["json"], p, "binary-rr-lower", 1000, 1.001)  # now lower than golden: looser
    r = run("check", str(p), "--no-progress")
    assert r.exit_code == 3 and "looser" in r.output


def test_accept_tighter_and_rtol(golden, tmp_path):
    p = tmp_path / "g.json"
    _perturb(golden["json"], p, "clones", 100000, 1.001)
    r = run("check", str(p), "--accept-tighter", "--no-progress")
    assert r.exit_code == 0 and "review them" in r.output and "clones" in r.output
    assert run("check", str(p), "--rtol", "0.01", "--no-progress").exit_code == 0
    _perturb(golden["json"], p, "clones", 100000, 0.999)
    assert run("check", str(p), "--accept-tighter", "--no-progress").exit_code == 3  # looser never accepted


def test_perturbed_csv_cell_and_kind_change(golden, tmp_path):
    lines = golden["csv"].read_text().splitlines()
    i = next(j for j, line in enumerate(lines) if ",erlingsson," in line and "not applicable" in line)
    cells = lines[i].split(",")  # n, eps0, delta, method, value, kind, note
    cells[4], cells[5], cells[6] = "0.5", "upper", ""
    lines[i] = ",".join(cells)
    p = tmp_path / "g.csv"
    p.write_text("\n".join(lines) + "\n")
    r = run("check", str(p), "--no-progress", "--format", "json")
    assert r.exit_code == 3
    diffs = [d for d in json.loads(r.output)["results"] if not d["accepted"]]
    assert len(diffs) == 1 and diffs[0]["verdict"] == "kind changed" and diffs[0]["key"][3] == "erlingsson"


@pytest.mark.parametrize("suffix,text", [
    ("json", json.dumps({"n": {"start": 1e3, "stop": 1e5, "num": 3, "scale": "log"}, "eps0": [0.4, 1],
                         "delta": 1e-6, "methods": ["clones", "blanket-hoeffding", "erlingsson", "binary-rr-lower"]})),
    ("toml", ('eps0 = [0.4, 1]\ndelta = "1e-6"\nmethods = ["clones", "blanket-hoeffding", "erlingsson", "binary-rr-lower"]\n'
              'n = "1e3:1e5:3:log"\n')),
])
def test_grid_file_and_ranges_give_the_same_table(golden, tmp_path, suffix, text):
    g = tmp_path / f"grid.{suffix}"
    g.write_text(text)
    r = run("table", "--grid", str(g), "--format", "json", "--no-progress")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["results"] == json.loads(golden["json"].read_text())["results"]
    assert json.loads(r.output)["inputs"] == json.loads(golden["json"].read_text())["inputs"]


def test_jobs_gives_the_same_table(golden):
    r = run("table", *AXES, *METHODS, "--format", "json", "--jobs", "2", "--no-progress")
    assert r.exit_code == 0
    assert json.loads(r.output)["results"] == json.loads(golden["json"].read_text())["results"]


def test_markdown_and_text_formats():
    r = run("table", "--n", "1e4", "--eps0", "1", "-m", "clones", "-m", "binary-rr-lower", "--format", "markdown")
    assert r.exit_code == 0 and "| n | eps0 | delta | method | value | kind | note |" in r.output
    row = next(line for line in r.output.splitlines() if "| clones |" in line)
    assert row.startswith("| 10000 | 1 | 1e-06 | clones | ") and row.endswith(" | upper |  |")
    from shuffle_accountant import api

    shown, exact = float(row.split("|")[5]), api.epsilon(1, 10**4).value
    assert exact <= shown <= exact * (1 + 1e-5)  # upper bounds are rounded up
    r = run("table", "--n", "1e4", "--eps0", "1", "--quantity", "delta", "--eps", "0.1", "-m", "clones")
    assert r.exit_code == 0 and "table of delta" in r.output


def test_progress_goes_to_stderr_not_stdout():
    r = CliRunner().invoke(main, ["table", "--n", "1e3:1e4:4:log", "--eps0", "0.5,1", "-m", "closed-form",
                                  "--format", "csv"])
    assert r.exit_code == 0
    assert "table" in r.stderr  # the progress bar's label
    assert r.stdout.startswith("# shuffle-accountant") and "table " not in r.stdout.splitlines()[-1]


@pytest.mark.parametrize("args,needle", [
    (["table", "--n", "1e3", "--eps0", "1", "-m", "nope"], "nope"),
    (["table", "--n", "1e3", "--eps0", "1", "-m", "krr"], "k"),
    (["table", "--n", "0:1e3:3", "--eps0", "1"], "n"),
    (["table", "--n", "1e3:1e4:x", "--eps0", "1"], "not a number"),
    (["table", "--eps0", "1"], "--n"),
    (["table", "--grid", "missing.json"], "missing.json"),
    (["table", "--grid", "x.json", "--n", "3"], "--grid"),
    (["check", "nonexistent.json"], "nonexistent.json"),
])
def test_bad_input_one_line_exit_2(args, needle):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert needle in r.output and "Traceback" not in r.output


def test_check_rejects_non_table(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{}")
    r = run("check", str(p))
    assert r.exit_code == 2 and "not a shuffle-acct JSON table" in r.output


def test_api_round_trip_and_comparison(tmp_path):
    g = tables.Grid(n=(1000, 10**4), eps0=(1.0,), delta=(1e-6,), methods=("clones", "stronger-clones"))
    t = tables.evaluate(g)
    for fmt in ("json", "csv"):
        p = tmp_path / f"t.{fmt}"
        p.write_text(tables.render_table(t, fmt))
        back = tables.load_table(p)
        assert back.grid == g and back.cells == [dict(c, note=c["note"]) for c in t.cells]
        assert tables.compare_tables(back, t).ok
