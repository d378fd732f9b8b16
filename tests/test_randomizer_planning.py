"""A deployed randomizer through composition, planning and tables (issue: mechanism-aware
amplification, items 1 and 5): ``compose --randomizer``, ``solve eps0|n --randomizer``,
``table`` / ``plot`` / ``check`` with a randomizer in the grid.

The composition soundness check is a brute force that shares no code with the package: for
tiny instances it enumerates every output tuple of every neighbouring dataset pair, builds
the exact shuffled-histogram laws, forms their ``T``-fold products and evaluates the
hockey-stick divergence directly.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from shuffle_accountant import api, composition, planning, tables
from shuffle_accountant.analyses import Query, get_method
from shuffle_accountant.cli import main
from shuffle_accountant.errors import InvalidParameter
from shuffle_accountant.randomizers import RandomizerFamily, make_randomizer

import oracle_blanket as ob

pld_extra = pytest.importorskip("dp_accounting")
from shuffle_accountant import pld as P  # noqa: E402

P.import_dp_accounting()


# ---------------------------------------------------------------------------------------
# brute force: exact composed delta of every neighbouring dataset pair
# ---------------------------------------------------------------------------------------


def _histogram_law(matrix: list[list[float]], data: tuple[int, ...]) -> dict[tuple[int, ...], float]:
    """Law of the shuffled output histogram: every output tuple enumerated."""
    outputs = len(matrix[0])
    law: dict[tuple[int, ...], float] = {}
    for ys in itertools.product(range(outputs), repeat=len(data)):
        p = math.prod(matrix[x][y] for x, y in zip(data, ys))
        h = tuple(ys.count(y) for y in range(outputs))
        law[h] = law.get(h, 0.0) + p
    return law


def _composed_delta(pa: dict, pb: dict, T: int, eps: float) -> float:
    """``sum (P^T - e^eps Q^T)_+`` over all ``T``-tuples of histograms."""
    keys = sorted(set(pa) | set(pb))
    a = np.array([pa.get(h, 0.0) for h in keys])
    b = np.array([pb.get(h, 0.0) for h in keys])
    A, B = a, b
    for _ in range(T - 1):
        A, B = np.outer(A, a).ravel(), np.outer(B, b).ravel()
    return float(np.sum(np.maximum(A - math.exp(eps) * B, 0.0)))


def _worst_composed_delta(matrix: list[list[float]], n: int, T: int, eps: float) -> float:
    """Max over every neighbouring pair (every ordered pair of first inputs, every multiset
    of the other users' inputs) of the exact composed delta at ``eps``."""
    k = len(matrix)
    worst = 0.0
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        laws = {x: _histogram_law(matrix, (x, *others)) for x in range(k)}
        for x1, x2 in itertools.permutations(range(k), 2):
            worst = max(worst, _composed_delta(laws[x1], laws[x2], T, eps))
    return worst


def _floats(m: list[list[object]]) -> list[list[float]]:
    return [[float(x) for x in row] for row in m]


CASES = [
    ("krr", {"k": 3}, 1.0, 4, _floats(ob.krr_matrix(3, 1.0))),
    ("oue", {"k": 2}, 1.5, 3, _floats(ob.oue_matrix(2, 1.5))),
]


@pytest.mark.parametrize("name,params,eps0,n,matrix", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("T", [1, 2, 3])
def test_blanket_pld_route_bounds_every_dataset_pair(name, params, eps0, n, matrix, T):
    """The composed blanket PLD's eps at delta is an upper bound for every neighbouring pair
    (the brute force), and not a vacuous one."""
    delta = 0.1
    family = RandomizerFamily.named(name, **params)
    b = P.pld_route([(eps0, n, T)], delta, "stronger-clones", None, None, {}, randomizer=family)
    assert b.kind == "upper" and b.value is not None
    worst = _worst_composed_delta(matrix, n, T, b.value)
    assert worst <= delta * (1.0 + 1e-9)
    # not vacuous: well below T * eps0; for k-RR (where the blanket is nearly attained) some
    # pair exceeds delta 10 % below the bound
    assert b.value < 0.8 * T * eps0
    if name == "krr":
        assert _worst_composed_delta(matrix, n, T, 0.9 * b.value) > delta


def test_profile_direction_is_above_the_profile_everywhere():
    """Chords of evaluated upper bounds stay above the certified lower bounds at every grid
    point (convexity in e^eps), and equal the evaluated bounds where evaluated."""
    r = make_randomizer("krr", 1.0, k=5)
    profile = get_method("blanket").profile(Query(1.0, 300, None, 0.0, r))
    step = 2e-3
    d = P.profile_direction(profile, step, 400, floor=1e-14)
    assert d.blocks <= P.PROFILE_MAX_EVALUATIONS
    rng = np.random.default_rng(7)
    for i in rng.choice(d.upper.size, 25, replace=False):
        b = profile.bounds(float(i) * step, 1e-6)
        assert d.upper[i] >= b.lower * (1.0 - 1e-12)
    assert np.all(np.diff(d.upper) <= 0.0)


def test_compose_with_randomizer_is_tighter_than_generic_and_above_attained():
    fam = RandomizerFamily.named("krr", k=10)
    c = composition.compose(eps0=1.0, n=2000, T=10, delta=1e-6, method="stronger-clones", randomizer=fam)
    g = composition.compose(eps0=1.0, n=2000, T=10, delta=1e-6, method="stronger-clones")
    by = {b.method: b for b in c.bounds}
    generic = {b.method: b for b in g.bounds}
    assert by["rdp"].value == pytest.approx(generic["rdp"].value)  # the generic route is unchanged
    assert by["pld"].value < 0.8 * generic["pld"].value
    assert by["advanced"].value < generic["advanced"].value
    assert c.best == "pld"
    assert "krr(k=10)" in by["pld"].validity
    # T = 1: the composed route is an upper bound on the one-round exact blanket eps
    one = composition.compose(eps0=1.0, n=2000, T=1, delta=1e-6, randomizer=fam)
    single = api.epsilon(1.0, 2000, 1e-6, "dataset-lower", randomizer=fam.at(1.0))
    pld_one = next(b for b in one.bounds if b.method == "pld")
    assert single.value <= pld_one.value <= 1.02 * single.value


def test_compose_refuses_what_does_not_fit():
    with pytest.raises(InvalidParameter, match="does not apply"):
        composition.compose(eps0=1.0, n=100, T=2, method="krr", k=3, randomizer=RandomizerFamily.named("sue", k=3))
    with pytest.raises(InvalidParameter, match="differs"):
        composition.compose(eps0=1.0, n=100, T=2, method="krr", k=4, randomizer=RandomizerFamily.named("krr", k=3))


# ---------------------------------------------------------------------------------------
# planning
# ---------------------------------------------------------------------------------------


def _blanket_delta(eps0: float, n: int, eps: float, fam: RandomizerFamily) -> float:
    return api.delta(eps0, n, eps, "blanket", randomizer=fam.at(eps0)).value  # type: ignore[return-value]


@pytest.mark.parametrize("name,params", [
    ("krr", {"k": 4}),
    pytest.param("oue", {"k": 6}, marks=pytest.mark.slow),
    pytest.param("olh", {"k": 50}, marks=pytest.mark.slow),
])
def test_solve_n_with_randomizer_is_verified_and_beats_generic(name, params):
    fam = RandomizerFamily.named(name, **params)
    eps, delta, eps0 = 0.3, 1e-6, 2.0
    b = planning.solve_n(eps, delta, eps0, "blanket", randomizer=fam)
    n = int(b.value)
    assert _blanket_delta(eps0, n, eps, fam) <= delta < _blanket_delta(eps0, n - 1, eps, fam)
    generic = planning.solve_n(eps, delta, eps0, "stronger-clones").value
    assert n <= generic
    assert b.inputs["randomizer"] == fam.describe()


def test_solve_eps0_with_randomizer_is_verified():
    fam = RandomizerFamily.named("krr", k=5)
    b = planning.solve_eps0(0.5, 1e-6, 5000, "blanket", rtol=1e-5, randomizer=fam)
    e0 = b.value
    assert _blanket_delta(e0, 5000, 0.5, fam) <= 1e-6 < _blanket_delta(b.details["next_eps0"], 5000, 0.5, fam)
    assert e0 >= planning.solve_eps0(0.5, 1e-6, 5000, "stronger-clones", rtol=1e-5).value


@pytest.mark.slow
def test_solve_eps0_with_a_non_krr_randomizer_is_verified():
    fam = RandomizerFamily.named("subset", k=8)
    b = planning.solve_eps0(0.5, 1e-6, 2000, "blanket", rtol=1e-4, randomizer=fam)
    assert _blanket_delta(b.value, 2000, 0.5, fam) <= 1e-6 < _blanket_delta(b.details["next_eps0"], 2000, 0.5, fam)


def test_solve_refusals():
    m = RandomizerFamily.of(make_matrix())
    with pytest.raises(InvalidParameter, match="fixed eps0"):
        planning.solve_eps0(1.0, 1e-6, 1000, "blanket", randomizer=m)
    with pytest.raises(InvalidParameter, match="needs a randomizer"):
        planning.solve_n(1.0, 1e-6, 1.0, "blanket")
    with pytest.raises(InvalidParameter, match="does not apply"):
        planning.solve_n(1.0, 1e-6, 1.0, "krr", k=3, randomizer=RandomizerFamily.named("oue", k=3))
    with pytest.raises(InvalidParameter, match="generic analysis"):
        planning.solve_n(1.0, 1e-6, 1.0, "blanket", rounds=3, randomizer=RandomizerFamily.named("krr", k=3))


def make_matrix():
    from shuffle_accountant.randomizers import MatrixRandomizer

    return MatrixRandomizer([[0.6, 0.3, 0.1], [0.2, 0.6, 0.2], [0.15, 0.25, 0.6]], source="test")


def test_solve_n_composed_rounds_with_randomizer():
    fam = RandomizerFamily.named("krr", k=8)
    b = planning.solve_n(0.5, 1e-6, 1.0, "stronger-clones", rounds=4, randomizer=fam)
    n = int(b.value)
    assert b.details["certified_eps"] <= 0.5
    c = composition.compose(eps0=1.0, n=n, T=4, delta=1e-6, method="stronger-clones", randomizer=fam)
    assert min(x.value for x in c.bounds if x.value is not None) <= 0.5
    generic = planning.solve_n(0.5, 1e-6, 1.0, "stronger-clones", rounds=4)
    assert n < generic.value


# ---------------------------------------------------------------------------------------
# tables, check, CLI
# ---------------------------------------------------------------------------------------


def test_grid_with_randomizer_round_trips_and_checks(tmp_path):
    fam = RandomizerFamily.named("olh", k=30)
    g = tables.Grid(n=(300.0,), eps0=(1.0, 3.0), delta=(1e-3,), methods=("blanket", "stronger-clones"),
                    randomizer=fam)
    assert tables.Grid.from_dict(json.loads(json.dumps(g.to_dict()))) == g
    t = tables.evaluate(g)
    for c in t.cells:
        expect = api.epsilon(c["eps0"], int(c["n"]), 1e-3, c["method"], randomizer=fam.at(c["eps0"]))
        assert c["value"] == pytest.approx(expect.value, rel=2e-6)  # shared engines: equal to rtol
    blanket = [c["value"] for c in t.cells if c["method"] == "blanket"]
    generic = [c["value"] for c in t.cells if c["method"] == "stronger-clones"]
    assert all(b <= s for b, s in zip(blanket, generic))
    golden = tmp_path / "t.json"
    golden.write_text(tables.render_table(t, "json"))
    r = CliRunner().invoke(main, ["check", str(golden), "--no-progress"])
    assert r.exit_code == 0, r.output


def test_grid_with_a_matrix_embeds_it():
    fam = RandomizerFamily.of(make_matrix())
    g = tables.Grid(n=(100.0,), eps0=(fam.fixed_eps0,), delta=(1e-3,), methods=("blanket",), randomizer=fam)
    again = tables.Grid.from_dict(json.loads(json.dumps(g.to_dict())))
    assert again.randomizer.fixed.matrix().tolist() == make_matrix().matrix().tolist()
    assert tables.evaluate(again).cells[0]["value"] == pytest.approx(tables.evaluate(g).cells[0]["value"], rel=2e-6)
    with pytest.raises(InvalidParameter, match="one eps0"):
        tables.Grid(n=(100.0,), eps0=(1.0,), delta=(1e-3,), methods=("blanket",), randomizer=fam)


@pytest.mark.parametrize("bad,match", [
    ({"name": "krr", "k": 3, "kk": 1}, "does not take"),
    ({"name": "krx", "k": 3}, "unknown randomizer"),
    ({"name": "krr"}, "needs k"),
    ({"name": "matrix", "matrix": [[1.0]]}, "row"),
    ({"name": "matrix", "matrix": [[0.5, 0.5], [0.5, 0.5]], "extra": 1}, "unknown key"),
    ("krr", "an object"),
])
def test_grid_randomizer_refusals(bad, match):
    d = {"n": [100], "eps0": [1], "delta": [1e-6], "methods": ["blanket"], "randomizer": bad}
    with pytest.raises(InvalidParameter, match=match):
        tables.Grid.from_dict(d)


def _run(args):
    return CliRunner().invoke(main, args)


def test_cli_table_and_solve_with_randomizer(tmp_path):
    r = _run(["table", "--n", "1e3", "--eps0", "1", "--randomizer", "krr", "--k", "6", "--no-progress",
              "--format", "json"])
    assert r.exit_code == 0, r.output
    cells = json.loads(r.output)["results"]
    methods = {c["method"] for c in cells}
    assert methods == {"blanket", "dataset-lower", "stronger-clones", "clones"}
    r = _run(["solve", "n", "--eps", "0.3", "--delta", "1e-6", "--eps0", "2", "--randomizer", "krr", "--k", "4",
              "--format", "json"])
    assert r.exit_code == 0, r.output
    rec = json.loads(r.output)["results"][0]
    assert rec["method"] == "blanket" and rec["kind"] == "upper"
    r = _run(["compose", "--eps0", "1", "--n", "1000", "--T", "3", "--randomizer", "krr", "--k", "4"])
    assert r.exit_code == 0, r.output
    assert "blanket" in r.output and "stronger-clones (generic)" in r.output


@pytest.mark.parametrize("args", [
    ["solve", "eps0", "--eps", "1", "--delta", "1e-6", "--n", "100", "--randomizer-file", "MATRIX"],
    ["solve", "n", "--eps", "1", "--delta", "1e-6", "--eps0", "1", "--randomizer", "sue", "--k", "3", "-m", "krr"],
    ["compose", "--eps0", "1", "--n", "100", "--T", "2", "--randomizer", "sue", "--k", "3", "-m", "krr"],
    ["table", "--grid", "GRID", "--randomizer", "krr", "--k", "3"],
    ["table", "--n", "100", "--eps0", "2", "--randomizer-file", "MATRIX"],
    ["table", "--n", "100", "--eps0", "1", "--randomizer", "oue", "--k", "3", "-m", "krr-lower"],
    ["table", "--n", "100", "--eps0", "1", "--randomizer", "krr", "--k", "3", "--g", "4"],
    ["plot", "--n", "100,200", "--eps0", "1", "--randomizer", "krx", "-o", "OUT"],
])
def test_cli_randomizer_refusals_exit_2(tmp_path, args):
    matrix = tmp_path / "m.json"
    matrix.write_text(json.dumps({"matrix": make_matrix().matrix().tolist()}))
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps({"n": [100], "eps0": [1], "delta": [1e-6]}))
    args = [str(matrix) if a == "MATRIX" else str(grid) if a == "GRID" else str(tmp_path / "o.png") if a == "OUT"
            else a for a in args]
    r = _run(args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
