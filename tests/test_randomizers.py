"""Randomizer objects: matrices against the independent oracle, eps0 as stated, the closed-form
class structures against exact grouping of the matrix, the registry, and bad matrix files."""

from __future__ import annotations

import json
import math
import os
import sys

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accountant.errors import InvalidParameter
from shuffle_accountant.randomizers import (
    KRR,
    MAX_FILE_BYTES,
    OLH,
    OUE,
    SUE,
    Hadamard,
    MatrixRandomizer,
    Subset,
    load_matrix,
    make_randomizer,
    registry,
)

sys.path.insert(0, os.path.dirname(__file__))
import oracle_blanket as ob

NAMED = [
    (KRR(2, 0.5), lambda: ob.krr_matrix(2, 0.5)),
    (KRR(4, 1.3), lambda: ob.krr_matrix(4, 1.3)),
    (SUE(3, 1.0), lambda: ob.sue_matrix(3, 1.0)),
    (SUE(4, 0.2), lambda: ob.sue_matrix(4, 0.2)),
    (OUE(3, 2.0), lambda: ob.oue_matrix(3, 2.0)),
    (OUE(5, 0.7), lambda: ob.oue_matrix(5, 0.7)),
    (OLH(2, 1.0, g=3), lambda: ob.olh_matrix(2, 3, 1.0)),
    (OLH(3, 0.8, g=2), lambda: ob.olh_matrix(3, 2, 0.8)),
    (Hadamard(3, 1.0), lambda: ob.hadamard_matrix(3, 1.0)),
    (Hadamard(6, 0.4), lambda: ob.hadamard_matrix(6, 0.4)),
    (Subset(4, 1.0, d=2), lambda: ob.subset_matrix(4, 2, 1.0)),
    (Subset(6, 0.3, d=3), lambda: ob.subset_matrix(6, 3, 0.3)),
    (Subset(5, 2.0, d=4), lambda: ob.subset_matrix(5, 4, 2.0)),
]
IDS = [r.describe() for r, _ in NAMED]


@pytest.mark.parametrize("rand,oracle", NAMED, ids=IDS)
def test_matrix_equals_oracle_matrix(rand, oracle):
    mine = rand.matrix()
    theirs = np.array([[float(x) for x in row] for row in oracle()])
    assert mine.shape == theirs.shape
    np.testing.assert_allclose(mine, theirs, rtol=1e-13, atol=0)


@pytest.mark.parametrize("rand,oracle", NAMED, ids=IDS)
def test_eps0_is_the_stated_eps0(rand, oracle):
    with mpmath.workdps(30):
        assert abs(float(ob.eps0_of_matrix(oracle())) - rand.eps0) < 1e-12
    assert abs(MatrixRandomizer(rand.matrix()).eps0 - rand.eps0) < 1e-12


@pytest.mark.parametrize("rand,oracle", NAMED, ids=IDS)
def test_closed_form_structure_matches_every_pair_of_the_oracle_matrix(rand, oracle):
    """The closed-form classes equal the exact grouping of the oracle's matrix for EVERY
    ordered pair (which also checks the symmetry argument: one structure serves all pairs)."""
    s = rand.pair_structure()
    with mpmath.workdps(40):
        m = oracle()
        mins = [min(r[y] for r in m) for y in range(len(m[0]))]
        gamma = float(mpmath.fsum(mins))
        for x1 in range(len(m)):
            for x2 in range(len(m)):
                if x1 == x2:
                    continue
                classes: dict[tuple[str, str], mpmath.mpf] = {}
                for y, mn in enumerate(mins):
                    key = (mpmath.nstr(m[x1][y] / mn, 25), mpmath.nstr(m[x2][y] / mn, 25))
                    classes[key] = classes.get(key, mpmath.mpf(0)) + mn
                got = sorted((float(mpmath.mpf(k[0])), float(mpmath.mpf(k[1])), float(v)) for k, v in classes.items())
                want = sorted(zip(s.a, s.b, s.mass))
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    assert g == pytest.approx(w, rel=1e-13)
    assert s.gamma == pytest.approx(gamma, rel=1e-13)
    assert s.rest == pytest.approx(1.0 - gamma, rel=1e-12, abs=1e-16)
    assert rand.blanket_mass == pytest.approx(gamma, rel=1e-13)
    assert s.rel_err < 1e-12


def test_matrix_randomizer_groups_float_noise_into_the_few_classes():
    for rand, _ in NAMED:
        structs = MatrixRandomizer(rand.matrix()).pair_structures()
        assert len(structs) == 1, rand.describe()
        assert structs[0].classes == rand.pair_structure().classes


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["krr", "sue", "oue", "olh", "hadamard", "subset"]), st.integers(2, 9),
       st.floats(0.05, 6.0))
def test_structures_are_probability_decompositions(name, k, eps0):
    """For any parameters: masses positive, gamma + rest = 1, sum_j a_j p_j = 1 (the law of
    R(x1)) and sum_j b_j p_j = 1, max a/b = e^eps0 (eps0 as stated)."""
    params = {"k": k}
    if name == "olh" and math.exp(eps0) > 1e6:
        params["g"] = 50
    r = make_randomizer(name, eps0, **params)
    s = r.pair_structure(1, 0)
    p, a, b = np.array(s.mass), np.array(s.a), np.array(s.b)
    assert np.all(p > 0)
    assert s.gamma + s.rest == pytest.approx(1.0, abs=1e-13)
    assert float(np.sum(a * p)) == pytest.approx(1.0, abs=1e-12)
    assert float(np.sum(b * p)) == pytest.approx(1.0, abs=1e-12)
    assert math.log(float(np.max(a / b))) == pytest.approx(eps0, rel=1e-12)
    assert s.max_log_ratio >= eps0


def test_large_domains_have_closed_form_structures():
    for r in (SUE(10**6, 1.0), OUE(10**9, 3.0), OLH(10**6, 2.0), Hadamard(10**6, 1.0), Subset(10**5, 1.0), KRR(10**9, 4.0)):
        s = r.pair_structure()
        assert s.classes <= 4
        assert s.gamma + s.rest == pytest.approx(1.0, abs=1e-12)


def test_defaults_and_ranges():
    assert OLH(10, 1.0).g == round(math.e + 1)
    assert Subset(10, 1.0).d == math.ceil(10 / (math.e + 1))
    assert Subset(2, 5.0).d == 1
    assert Hadamard(3, 1.0).K == 4 and Hadamard(4, 1.0).K == 8 and Hadamard(7, 1.0).K == 8
    for bad in (lambda: KRR(1, 1.0), lambda: KRR(3, 0.0), lambda: KRR(3, math.inf), lambda: KRR(2.5, 1.0),
                lambda: Subset(4, 1.0, d=4), lambda: Subset(4, 1.0, d=0), lambda: OLH(3, 1.0, g=1),
                lambda: SUE(True, 1.0), lambda: OUE(3, "x"), lambda: OUE(3, 51.0), lambda: KRR(10**10, 1.0)):
        with pytest.raises(InvalidParameter):
            bad()
    with pytest.raises(InvalidParameter, match="x2: 3 is out of range"):
        KRR(3, 1.0).pair_structure(0, 3)
    with pytest.raises(InvalidParameter, match="equal to x1"):
        KRR(3, 1.0).pair_structure(1, 1)


def test_registry():
    assert set(registry) == {"krr", "sue", "oue", "olh", "hadamard", "subset"}
    for name, spec in registry.items():
        r = make_randomizer(name, 1.0, k=5)
        assert r.name == name and r.eps0 == 1.0
        assert "k" in spec.required
    assert make_randomizer("olh", 1.0, k=5, g=7).g == 7
    assert make_randomizer("subset", 1.0, k=5, d=3).d == 3
    with pytest.raises(InvalidParameter, match="unknown randomizer"):
        make_randomizer("rappor", 1.0, k=3)
    with pytest.raises(InvalidParameter, match="does not take d"):
        make_randomizer("krr", 1.0, k=3, d=2)
    with pytest.raises(InvalidParameter, match="needs k"):
        make_randomizer("sue", 1.0)


# ---------------------------------------------------------------------------------------
# Matrix files.
# ---------------------------------------------------------------------------------------


def _write(tmp_path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def test_load_csv_and_json(tmp_path):
    m = KRR(3, 1.0).matrix()
    csv_text = "\n".join(",".join(repr(float(x)) for x in row) for row in m) + "\n"
    r1 = load_matrix(_write(tmp_path, "k.csv", csv_text))
    r2 = load_matrix(_write(tmp_path, "k.json", json.dumps(m.tolist())))
    r3 = load_matrix(_write(tmp_path, "k2.json", json.dumps({"matrix": m.tolist()})))
    for r in (r1, r2, r3):
        assert r.eps0 == pytest.approx(1.0, abs=1e-12)
        assert r.n_inputs == 3 and r.n_outputs == 3
        s = r.pair_structures()
        assert len(s) == 1 and s[0].classes == 3
    assert "k.csv" in r1.describe()


def test_matrix_pairs_differ_for_asymmetric_matrices():
    m = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]])
    r = MatrixRandomizer(m)
    assert len(r.pair_structures()) == 6
    assert r.eps0 == pytest.approx(math.log(0.5 / 0.2))
    # all-zero columns are unused outputs, allowed
    r0 = MatrixRandomizer(np.array([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]]))
    assert r0.eps0 == pytest.approx(math.log(2.0))


BAD_FILES = [
    ("neg.csv", "0.5,0.5\n1.2,-0.2\n", "row 2 column 2: negative entry"),
    ("sum.csv", "0.5,0.5\n0.3,0.6\n", "row 2 sums to"),
    ("one.csv", "0.5,0.5\n", "at least 2 rows"),
    ("nan.csv", "0.5,0.5\nnan,0.5\n", "row 2 column 1: 'nan' is not a number"),
    ("inf.csv", "0.5,0.5\n0.5,inf\n", "row 2 column 2: 'inf' is not a number"),
    ("huge.csv", "0.5,0.5\n0.5,1e999\n", "row 2 column 2: entry inf is not finite"),
    ("underscore.csv", "0.5,0.5\n0.2_5,0.75\n", "row 2 column 1: '0.2_5' is not a number"),
    ("hex.csv", "0.5,0.5\n0x1p-1,0.5\n", "row 2 column 1: '0x1p-1' is not a number"),
    ("inf.json", "[[0.5, 0.5], [Infinity, 0.5]]", "Infinity is not a number (JSON numbers are finite)"),
    ("nan.json", "[[0.5, 0.5], [NaN, 0.5]]", "NaN is not a number (JSON numbers are finite)"),
    ("huge.json", "[[0.5, 0.5], [1e999, 0.5]]", "row 2 column 1: entry inf is not finite"),
    ("null.json", "[[0.5, null], [0.5, 0.5]]", "row 1 column 2: null is not a number"),
    ("text.csv", "0.5,0.5\n0.5,abc\n", "row 2 column 2: 'abc' is not a number"),
    ("ragged.csv", "0.5,0.5\n0.2,0.3,0.5\n", "row 2 has 3 entries but row 1 has 2"),
    ("empty.csv", "", "empty"),
    ("blank.csv", "   \n\n", "empty"),
    ("hole.csv", "0.5,0.5\n\n0.5,0.5\n", "row 2 is empty"),
    ("header.csv", "a,b\n0.5,0.5\n0.5,0.5\n", "row 1 column 1: 'a' is not a number"),
    ("zero.csv", "0.5,0.5\n1.0,0.0\n", "not pure LDP"),
    ("str.json", '[[0.5, "0.5"], [0.5, 0.5]]', "is a string, not a number"),
    ("bool.json", "[[true, 0.0], [0.5, 0.5]]", "is not a number"),
    ("key.json", '{"matrix": [[0.5, 0.5], [0.5, 0.5]], "eps0": 1}', "unknown key(s) 'eps0'"),
    ("bad.json", "[[0.5, 0.5], [0.5, 0.5]", "not valid JSON"),
    ("obj.json", '{"rows": []}', "unknown key"),
    ("flat.json", "[0.5, 0.5]", "row 1 is not a non-empty list"),
    ("m.xlsx", "0.5,0.5\n0.5,0.5\n", "unknown format"),
    ("bin.csv", b"\xff\xfe\x00\x01", "cannot read it as UTF-8"),
]


@pytest.mark.parametrize("name,text,message", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_matrix_files_give_one_line(tmp_path, name, text, message):
    path = _write(tmp_path, name, text)
    with pytest.raises(InvalidParameter) as info:
        load_matrix(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert message in msg
    assert name in msg


def test_missing_and_huge_files(tmp_path):
    with pytest.raises(InvalidParameter, match="cannot read it"):
        load_matrix(str(tmp_path / "absent.csv"))
    with pytest.raises(InvalidParameter, match="not a regular file"):
        load_matrix(str(tmp_path))
    big = tmp_path / "big.csv"
    with open(big, "wb") as fh:  # sparse file: the size check must refuse it before reading
        fh.seek(MAX_FILE_BYTES + 10)
        fh.write(b"\n")
    with pytest.raises(InvalidParameter, match="more than the 10 MB"):
        load_matrix(str(big))
    many = tmp_path / "many.csv"
    many.write_text(("0," * 600_000 + "1\n") * 2)  # < 10 MB but > 1e6 entries
    with pytest.raises(InvalidParameter, match="entries accepted"):
        load_matrix(str(many))


@pytest.mark.parametrize("k", [2, 3, 7, 100])
@pytest.mark.parametrize("eps0", [0.5, 1.0, 4.0, 6.0, 10.0])
def test_olh_pair_classes_within_their_rel_of_the_exact_masses(k, eps0):
    """OLH's pair structure: every class mass within rel_err of its 50-digit value from the docstring's formulas,
    and k = 2 has exactly three classes (the H(x1) = H(x1') = y class, q (1/g - g^{1-k}), is 0 there: computed as a
    difference it was ~1e-21 at eps0 >= 4, a class whose relative error no rel_err bounds)."""
    from shuffle_accountant.randomizers import OLH

    r = OLH(k, eps0)
    st = r.pair_structure()
    with mpmath.workdps(50):
        e, g = mpmath.exp(mpmath.mpf(eps0)), mpmath.mpf(r.g)
        p, q = e / (e + g - 1), 1 / (e + g - 1)
        const = g ** (1 - k)
        exact = {(1.0, 1.0): q * (g - 2 + 1 / g) + p * const, (1.0, float(e)): q * (1 - 1 / g),
                 (float(e), 1.0): q * (1 - 1 / g), (float(e), float(e)): q * (1 / g - const)}
        want = {key: m for key, m in exact.items() if m > 0}
        got = {(float(a), float(b)): m for m, a, b in zip(st.mass, st.a, st.b)}
        assert set(got) == set(want), (sorted(got), sorted(want))
        for key, m in got.items():
            assert abs(mpmath.mpf(m) / want[key] - 1) <= st.rel_err, (key, m, want[key])
    assert len(st.mass) == (3 if k == 2 else 4)
