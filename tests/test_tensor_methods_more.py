"""The third batch of PyTorch's names for ported programs, against PyTorch: logical operations,
comparison and arithmetic aliases (div's rounding modes), fmax/fmin, float_power, bincount, cov and
corrcoef, dist, vdot, addmv/addr/addbmm, tensor_split and its kin, diagflat and the tensor facts
(nbytes, is_signed, retains_grad, ...). Values and gradients to second order in float64
(`compare_with_torch`), dtypes where PyTorch's rule decides them, edge values and errors."""

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad.errors import DtypeError, ShapeError
from oracles import compare_with_torch as _compare

INF, NAN = np.inf, np.nan


def _same(out, expected):
    """The same values (NaN where PyTorch has NaN) and the same dtype as PyTorch's result."""
    expected = expected.numpy()
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    np.testing.assert_array_equal(out.data, expected)


# --------------------------------------------------------------------------- logical operations
LOGICAL = ["logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("name", LOGICAL)
def test_logical_binary_match_torch_across_dtypes_and_broadcasting(name):
    x = np.array([[0.0, 1.0, -2.0, NAN], [0.0, 0.0, 3.0, -0.0]])
    y = np.array([0, 5, 0, 1])
    expected = getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y))
    _same(getattr(mg, name)(mg.tensor(x), mg.tensor(y)), expected)
    _same(getattr(mg.tensor(x), name)(mg.tensor(y)), expected)
    _same(getattr(mg, name)(mg.tensor(x > 0), [True, False, True, False]), getattr(torch, name)(torch.from_numpy(x > 0), torch.tensor([True, False, True, False])))


def test_logical_not_matches_torch_and_is_a_constant(rng):
    x = np.concatenate([rng.standard_normal(4), [0.0, -0.0, NAN]])
    out = mg.logical_not(mg.tensor(x, requires_grad=True))
    _same(out, torch.logical_not(torch.from_numpy(x)))
    _same(mg.tensor([0, 3, -1]).logical_not(), torch.logical_not(torch.tensor([0, 3, -1])))
    assert not out.requires_grad


# --------------------------------------------------------------------------- comparison and arithmetic aliases
COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal"]


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparisons_as_functions_and_methods_match_torch(name, rng):
    x = rng.integers(-2, 3, (3, 4)).astype(np.float64)
    y = rng.integers(-2, 3, 4).astype(np.float64)
    expected = getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y))
    _same(getattr(mg, name)(mg.tensor(x), mg.tensor(y)), expected)
    _same(getattr(mg.tensor(x), name)(mg.tensor(y)), expected)
    _same(getattr(mg, name)(mg.tensor(x), 0.0), getattr(torch, name)(torch.from_numpy(x), 0.0))


@pytest.mark.parametrize("name, alpha", [("add", 1), ("add", 2.5), ("sub", 1), ("subtract", -3.0), ("mul", None), ("multiply", None)])
def test_arithmetic_aliases_match_torch_to_second_order(name, alpha, rng):
    x, y = rng.standard_normal((2, 3)), rng.standard_normal(3)
    keywords = {} if alpha is None else {"alpha": alpha}
    _compare(lambda a, b: getattr(mg, name)(a, b, **keywords), lambda a, b: getattr(torch, name)(a, b, **keywords), [x, y], second=True)
    _compare(lambda a, b: getattr(a, name)(b, **keywords), lambda a, b: getattr(a, name)(b, **keywords), [x, y], second=True)


DIVIDENDS = np.array([7.0, -7.0, 7.0, -7.0, 6.0, -6.0, 0.0, -0.0, 1.0, -1.0, 0.0, 1.0, INF, NAN, 1.0, -7.5])
DIVISORS = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 3.0, 2.0, 0.0, 0.0, 0.0, INF, 2.0, 1.0, 0.1, 2.5])


@pytest.mark.parametrize("name", ["div", "divide"])
@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_rounding_modes_match_torch_at_edge_values(name, mode):
    expected = getattr(torch, name)(torch.from_numpy(DIVIDENDS), torch.from_numpy(DIVISORS), rounding_mode=mode)
    for out in (getattr(mg, name)(mg.tensor(DIVIDENDS), mg.tensor(DIVISORS), rounding_mode=mode),
                getattr(mg.tensor(DIVIDENDS), name)(mg.tensor(DIVISORS), rounding_mode=mode)):
        np.testing.assert_array_equal(out.data, expected.numpy())
        numbers = ~np.isnan(expected.numpy())
        np.testing.assert_array_equal(np.signbit(out.data)[numbers], np.signbit(expected.numpy())[numbers])


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_of_integers_keeps_torch_dtypes_and_refuses_zero(mode):
    x, y = np.array([7, -7, 7, -7, 6, -6, 0, 1]), np.array([2, 2, -2, -2, -3, 4, 5, 7])
    for ours, theirs in ((mg.div(mg.tensor(x), mg.tensor(y), rounding_mode=mode), torch.div(torch.from_numpy(x), torch.from_numpy(y), rounding_mode=mode)),
                         (mg.div(mg.tensor(x), 3, rounding_mode=mode), torch.div(torch.from_numpy(x), 3, rounding_mode=mode))):
        if mode is None:  # floats: PyTorch's default float32, minigrad's float64
            assert ours.dtype == np.float64
            np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-7)
        else:
            _same(ours, theirs)
    if mode is not None:
        with pytest.raises(ZeroDivisionError):
            mg.div(mg.tensor(x), mg.tensor(np.zeros_like(y)), rounding_mode=mode)


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_gradients_match_torch(mode, rng):
    x, y = rng.standard_normal((2, 3)) * 3, rng.choice([-1.0, 1.0], 3) * rng.uniform(0.5, 2.0, 3)
    _compare(lambda a, b: mg.div(a, b, rounding_mode=mode), lambda a, b: torch.div(a, b, rounding_mode=mode), [x, y], second=True)


def test_div_refuses_an_unknown_rounding_mode():
    with pytest.raises(ValueError, match="rounding_mode"):
        mg.div(mg.tensor([1.0]), 2.0, rounding_mode="round")


def test_true_divide_method_takes_no_rounding_mode():
    with pytest.raises(TypeError):
        mg.tensor([1.0]).true_divide(2.0, rounding_mode="floor")


# --------------------------------------------------------------------------- positive, sgn, float_power
def test_positive_and_sgn_match_torch(rng):
    x = rng.standard_normal((3, 4))
    _compare(mg.positive, torch.positive, [x], second=True)
    _compare(lambda a: a.positive(), lambda a: a.positive(), [x], second=True)
    x[0, 0] = 0.0
    leaf = mg.tensor(x, requires_grad=True)
    for out in (mg.sgn(leaf), leaf.sgn()):
        _same(out, torch.sgn(torch.from_numpy(x)))
        (g,) = mg.gradients(out.sum(), [leaf])  # a step: zeros, where PyTorch has a ZeroTensor
        assert not g.data.any()
    _same(mg.sgn(mg.tensor([-3, 0, 2])), torch.sgn(torch.tensor([-3, 0, 2])))


def test_positive_refuses_bool_as_torch():
    with pytest.raises(RuntimeError):
        torch.positive(torch.tensor([True]))
    with pytest.raises(DtypeError, match="bool"):
        mg.positive(mg.tensor([True]))


def test_float_power_matches_torch_to_second_order(rng):
    x, y = rng.uniform(0.5, 2.0, (2, 3)), rng.standard_normal(3)
    _compare(mg.float_power, torch.float_power, [x, y], second=True)
    _compare(lambda a: a.float_power(3), lambda a: a.float_power(3), [x], second=True)


@pytest.mark.parametrize("x, y", [(np.array([2, 3], dtype=np.int32), 2), (np.array([2.0, 3.0], dtype=np.float32), np.array([0.5, 2], dtype=np.float32)),
                                  (np.array([2, 5]), 0.5), (2.0, np.array([1, 2]))])
def test_float_power_is_float64_whatever_the_dtypes(x, y):
    as_torch = [torch.from_numpy(v) if isinstance(v, np.ndarray) else v for v in (x, y)]
    expected = torch.float_power(*as_torch) if isinstance(x, np.ndarray) else torch.float_power(torch.tensor(x), as_torch[1])
    out = mg.float_power(*[mg.tensor(v) if isinstance(v, np.ndarray) else v for v in (x, y)])
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.data, expected.numpy(), rtol=1e-15)


# --------------------------------------------------------------------------- fmax, fmin
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_ignore_nan_as_torch(name):
    x = np.array([NAN, 1.0, NAN, 2.0, -INF, 3.0, 0.0, -0.0])
    y = np.array([1.0, NAN, NAN, 5.0, INF, -1.0, -0.0, 0.0])
    expected = getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y))
    _same(getattr(mg, name)(mg.tensor(x), mg.tensor(y)), expected)
    _same(getattr(mg.tensor(x), name)(mg.tensor(y)), expected)
    _same(getattr(mg, name)(mg.tensor([1, 7, 3]), mg.tensor([4, 2, 3])), getattr(torch, name)(torch.tensor([1, 7, 3]), torch.tensor([4, 2, 3])))


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_gradients_match_torch_with_ties_and_nan(name, rng):
    x = rng.standard_normal((3, 4))
    y = rng.standard_normal(4)
    x[0] = y  # ties: PyTorch gives the gradient to input alone
    x[1, 0], y[2] = NAN, NAN  # NaN loses: the gradient goes to the number
    _compare(getattr(mg, name), getattr(torch, name), [x[:, [0, 1, 3]], y[[0, 1, 3]]], second=True)
    xs = [mg.tensor(x, requires_grad=True), mg.tensor(y, requires_grad=True)]
    ts = [torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)]
    getattr(mg, name)(*xs).sum().backward()
    getattr(torch, name)(*ts).sum().backward()
    for a, t in zip(xs, ts):
        np.testing.assert_array_equal(a.grad.data, t.grad.numpy())


# --------------------------------------------------------------------------- isposinf, isneginf, isreal
@pytest.mark.parametrize("name", ["isposinf", "isneginf", "isreal"])
def test_infinity_and_reality_tests_match_torch(name):
    for x in (np.array([INF, -INF, NAN, 0.0, 1e308, -1e308]), np.array([[1, -2], [0, 3]]), np.array([True, False])):
        expected = getattr(torch, name)(torch.from_numpy(x))
        _same(getattr(mg, name)(mg.tensor(x)), expected)
        _same(getattr(mg.tensor(x), name)(), expected)


# --------------------------------------------------------------------------- bincount
def test_bincount_matches_torch_with_empty_bins_and_minlength(rng):
    x = rng.integers(0, 6, 20) * 2  # only even values: the odd bins are empty
    for minlength in (0, 3, 20):
        _same(mg.bincount(mg.tensor(x), minlength=minlength), torch.bincount(torch.from_numpy(x), minlength=minlength))
    _same(mg.tensor(x).bincount(), torch.from_numpy(x).bincount())
    _same(mg.bincount(mg.tensor(np.array([], dtype=np.int64))), torch.bincount(torch.tensor([], dtype=torch.int64)))
    _same(mg.bincount(mg.tensor(np.array([], dtype=np.int64)), minlength=4), torch.bincount(torch.tensor([], dtype=torch.int64), minlength=4))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_bincount_weights_keep_torch_dtypes(dtype, rng):
    x, w = rng.integers(0, 5, 12), (rng.standard_normal(12) * 4).astype(dtype)
    out, expected = mg.bincount(mg.tensor(x), mg.tensor(w), 7), torch.bincount(torch.from_numpy(x), torch.from_numpy(w), 7)
    assert out.dtype == expected.numpy().dtype
    np.testing.assert_allclose(out.data, expected.numpy(), rtol=1e-6)


def test_bincount_is_differentiable_in_its_weights(rng):
    x, w = rng.integers(0, 4, 10), rng.standard_normal(10)
    weights = mg.tensor(w, requires_grad=True)
    u = rng.standard_normal(6)
    (mg.bincount(mg.tensor(x), weights, minlength=6) * mg.tensor(u)).sum().backward()
    np.testing.assert_array_equal(weights.grad.data, u[x])


@pytest.mark.parametrize("bad", [np.array([1, -1, 2]), np.array([[1, 2]]), np.array([1.0, 2.0])])
def test_bincount_refuses_what_torch_refuses(bad):
    with pytest.raises(RuntimeError):
        torch.bincount(torch.from_numpy(bad))
    with pytest.raises(ShapeError, match="bincount"):
        mg.bincount(mg.tensor(bad))


def test_bincount_refuses_weights_of_another_shape():
    with pytest.raises(ShapeError, match="weights"):
        mg.bincount(mg.tensor([0, 1]), mg.tensor([1.0, 2.0, 3.0]))


# --------------------------------------------------------------------------- cov, corrcoef
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("weights", [None, "f", "a", "fa"])
def test_cov_matches_torch_to_second_order(correction, weights, rng):
    x = rng.standard_normal((3, 7))
    fw = rng.integers(1, 4, 7)
    aw = rng.uniform(0.5, 2.0, 7)
    arrays = [x] + ([aw] if "a" in weights else []) if weights else [x]

    def call(module, fweights):
        def f(a, *rest):
            kw = {"correction": correction}
            if weights and "f" in weights:
                kw["fweights"] = fweights
            if weights and "a" in weights:
                kw["aweights"] = rest[0]
            return module.cov(a, **kw)
        return f

    _compare(call(mg, mg.tensor(fw)), call(torch, torch.from_numpy(fw)), arrays, second=True)


def test_cov_of_a_vector_is_a_scalar_and_a_method(rng):
    x = rng.standard_normal(6)
    _compare(lambda a: a.cov(), lambda a: a.cov(), [x], second=True)
    assert mg.cov(mg.tensor(x)).shape == ()


def test_cov_with_too_few_observations_is_inf_or_nan_as_torch():
    x = np.array([[1.0], [2.0]])
    with pytest.warns(UserWarning):
        expected = torch.cov(torch.from_numpy(x))
    np.testing.assert_array_equal(mg.cov(mg.tensor(x)).data, expected.numpy())


@pytest.mark.parametrize("keywords, match", [({"fweights": np.array([1.0, 2.0, 3.0])}, "fweights"), ({"aweights": np.array([1, 2, 3])}, "aweights"),
                                             ({"fweights": np.array([1, 2])}, "fweights"), ({"aweights": np.array([1.0, -2.0, 3.0])}, "non-negative")])
def test_cov_refuses_bad_weights(keywords, match):
    x = np.ones((2, 3))
    with pytest.raises(RuntimeError):
        torch.cov(torch.from_numpy(x), **{k: torch.from_numpy(v) for k, v in keywords.items()})
    with pytest.raises((ShapeError, ValueError), match=match):
        mg.cov(mg.tensor(x), **{k: mg.tensor(v) for k, v in keywords.items()})


def test_cov_refuses_three_dimensions():
    with pytest.raises(ShapeError, match="cov"):
        mg.cov(mg.zeros((2, 2, 2)))


def test_corrcoef_matches_torch_to_second_order(rng):
    x = rng.standard_normal((4, 9))
    _compare(mg.corrcoef, torch.corrcoef, [x], second=True, atol=1e-9)
    _compare(lambda a: a.corrcoef(), lambda a: a.corrcoef(), [x[:2]], second=True, atol=1e-9)
    np.testing.assert_allclose(mg.corrcoef(mg.tensor(x[0])).data, torch.corrcoef(torch.from_numpy(x[0])).numpy())


# --------------------------------------------------------------------------- dist, vdot, addmv, addr, addbmm
@pytest.mark.parametrize("p", [1, 2, 3, 0.5, INF])
def test_dist_matches_torch_to_second_order(p, rng):
    x, y = rng.standard_normal((3, 4)), rng.standard_normal(4)
    _compare(lambda a, b: mg.dist(a, b, p), lambda a, b: torch.dist(a, b, p), [x, y], second=True)
    _compare(lambda a, b: a.dist(b, p=p), lambda a, b: a.dist(b, p=p), [x, y], second=p != INF)


def test_vdot_matches_torch_and_refuses_matrices(rng):
    x, y = rng.standard_normal(5), rng.standard_normal(5)
    _compare(mg.vdot, torch.vdot, [x, y], second=True)
    _compare(lambda a, b: a.vdot(b), lambda a, b: a.vdot(b), [x, y], second=True)
    with pytest.raises(ShapeError):
        mg.vdot(mg.ones((2, 2)), mg.ones((2, 2)))


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, -2.0), (0, 3.0)])
def test_addmv_addr_addbmm_match_torch_to_second_order(beta, alpha, rng):
    kw = {"beta": beta, "alpha": alpha}
    cases = [("addmv", [rng.standard_normal(3), rng.standard_normal((3, 4)), rng.standard_normal(4)]),
             ("addr", [rng.standard_normal((3, 1)), rng.standard_normal(3), rng.standard_normal(5)]),
             ("addbmm", [rng.standard_normal((3, 5)), rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))])]
    for name, arrays in cases:
        if beta == 0:  # torch ignores input then, so it gets no gradient: compare the others'
            _compare(lambda *a: getattr(mg, name)(mg.tensor(arrays[0]), *a, **kw),
                     lambda *a: getattr(torch, name)(torch.from_numpy(arrays[0]), *a, **kw), arrays[1:], second=True)
        else:
            _compare(lambda *a: getattr(mg, name)(*a, **kw), lambda *a: getattr(torch, name)(*a, **kw), arrays, second=True)
        _compare(lambda a, *b: getattr(a, name)(*b, **kw), lambda a, *b: getattr(a, name)(*b, **kw), arrays, second=beta != 0)


@pytest.mark.parametrize("name, shapes", [("addmv", [(3,), (3, 4), (5,)]), ("addmv", [(2,), (3, 4), (4,)]), ("addr", [(4, 4), (3,), (4,)]),
                                          ("addbmm", [(3, 5), (2, 3, 4), (3, 4, 5)]), ("addbmm", [(3, 3), (2, 3, 4), (2, 4, 5)])])
def test_addmv_addr_addbmm_refuse_bad_shapes(name, shapes):
    with pytest.raises(RuntimeError):
        getattr(torch, name)(*[torch.ones(s) for s in shapes])
    with pytest.raises(ShapeError):
        getattr(mg, name)(*[mg.ones(s) for s in shapes])


# --------------------------------------------------------------------------- tensor_split and its kin
@pytest.mark.parametrize("cut", [1, 3, 7, 9, [1, 5], [2, 2, 9], [], [-2], [5, 1], "tensor-int", "tensor-list"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_tensor_split_matches_torch_and_its_gradient(cut, dim, rng):
    x = rng.standard_normal((7, 7))
    as_mg = {"tensor-int": mg.tensor(3), "tensor-list": mg.tensor([2, 4])}.get(cut, cut) if isinstance(cut, str) else cut
    as_torch = {"tensor-int": torch.tensor(3), "tensor-list": torch.tensor([2, 4])}.get(cut, cut) if isinstance(cut, str) else cut
    _compare(lambda a: mg.cat([p.reshape(-1) * (i + 1) for i, p in enumerate(mg.tensor_split(a, as_mg, dim))]),
             lambda a: torch.cat([p.reshape(-1) * (i + 1) for i, p in enumerate(torch.tensor_split(a, as_torch, dim))]), [x])
    ours, theirs = mg.tensor(x).tensor_split(as_mg, dim), torch.from_numpy(x).tensor_split(as_torch, dim)
    assert [p.shape for p in ours] == [tuple(p.shape) for p in theirs]


def test_tensor_split_refuses_zero_sections_and_floats():
    with pytest.raises(ValueError, match="positive"):
        mg.tensor_split(mg.ones(3), 0)
    with pytest.raises(TypeError):
        mg.tensor_split(mg.ones(3), 1.5)


@pytest.mark.parametrize("name, shape, cut", [("hsplit", (6,), 3), ("hsplit", (2, 6), [1, 4]), ("hsplit", (2, 4, 3), 2), ("vsplit", (4, 3), 2),
                                              ("vsplit", (5, 2), [1, 3]), ("dsplit", (2, 2, 6), 3), ("dsplit", (1, 2, 5), [2])])
def test_hsplit_vsplit_dsplit_match_torch(name, shape, cut, rng):
    x = rng.standard_normal(shape)
    ours, theirs = getattr(mg, name)(mg.tensor(x), cut), getattr(torch, name)(torch.from_numpy(x), cut)
    assert len(ours) == len(theirs)
    for a, t in zip(ours, theirs):
        np.testing.assert_array_equal(a.data, t.numpy())
    assert [p.shape for p in getattr(mg.tensor(x), name)(cut)] == [tuple(p.shape) for p in theirs]


@pytest.mark.parametrize("name, shape, cut", [("hsplit", (7,), 3), ("vsplit", (6,), 2), ("dsplit", (2, 4), 2), ("vsplit", (5, 2), 2), ("hsplit", (2, 3), 0)])
def test_hsplit_vsplit_dsplit_refuse_as_torch(name, shape, cut):
    with pytest.raises(RuntimeError):
        getattr(torch, name)(torch.ones(shape), cut)
    with pytest.raises((ShapeError, ValueError)):
        getattr(mg, name)(mg.ones(shape), cut)


def test_split_with_sizes_matches_torch_and_refuses_bad_sizes(rng):
    x = rng.standard_normal((3, 6))
    _compare(lambda a: mg.cat([p * (i + 1) for i, p in enumerate(mg.split_with_sizes(a, [1, 0, 5], 1))], 1),
             lambda a: torch.cat([p * (i + 1) for i, p in enumerate(torch.split_with_sizes(a, [1, 0, 5], 1))], 1), [x], second=True)
    assert [p.shape for p in mg.tensor(x).split_with_sizes([2, 1])] == [(2, 6), (1, 6)]
    with pytest.raises(ShapeError):
        mg.split_with_sizes(mg.tensor(x), [1, 1])
    with pytest.raises(TypeError):
        mg.split_with_sizes(mg.tensor(x), 1)


@pytest.mark.parametrize("shape", [(4,), (2, 3), (1,), (0,)])
@pytest.mark.parametrize("offset", [0, 2, -1])
def test_diagflat_matches_torch_to_second_order(shape, offset, rng):
    x = rng.standard_normal(shape)
    _compare(lambda a: mg.diagflat(a, offset), lambda a: torch.diagflat(a, offset), [x], second=True)
    _compare(lambda a: a.diagflat(offset=offset), lambda a: a.diagflat(offset=offset), [x])


# --------------------------------------------------------------------------- tensor facts
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int32, np.int8, np.uint8, np.bool_])
def test_tensor_facts_match_torch(dtype):
    x = np.zeros((2, 3), dtype=dtype)
    ours, theirs = mg.tensor(x), torch.from_numpy(x)
    assert ours.ndimension() == theirs.ndimension() == 2
    assert ours.nbytes == theirs.nbytes and ours.itemsize == theirs.itemsize
    assert ours.is_signed() == theirs.is_signed()
    assert ours.is_complex() is theirs.is_complex() is False
    assert ours.is_cpu is theirs.is_cpu is True and ours.is_cuda is theirs.is_cuda is False


def test_retains_grad_as_torch():
    ours, theirs = mg.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], requires_grad=True)
    for leaf in (ours, theirs):
        leaf.retain_grad()
    assert ours.retains_grad is theirs.retains_grad is False  # a leaf keeps .grad anyway
    a, b = ours * 2, theirs * 2
    assert a.retains_grad is b.retains_grad is False
    a.retain_grad(), b.retain_grad()
    assert a.retains_grad is b.retains_grad is True
    (a * a).sum().backward()
    np.testing.assert_array_equal(a.grad.data, [4.0, 8.0])


# --------------------------------------------------------------------------- integer functions
INTEGER_BINARY = ["gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]


@pytest.mark.parametrize("name", INTEGER_BINARY)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_integer_functions_match_torch(name, dtype, rng):
    low = 0 if dtype == np.uint8 or "shift" in name else -20
    x, y = rng.integers(low, 20, (3, 4)).astype(dtype), rng.integers(0, 5, 4).astype(dtype)
    expected = getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y))
    _same(getattr(mg, name)(mg.tensor(x), mg.tensor(y)), expected)
    _same(getattr(mg.tensor(x), name)(mg.tensor(y)), expected)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_functions_of_bools_match_torch(name):
    x, y = np.array([True, True, False, False]), np.array([True, False, True, False])
    _same(getattr(mg, name)(mg.tensor(x), mg.tensor(y)), getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y)))


def test_bitwise_not_matches_torch():
    for x in (np.array([0, 5, -3, 127], dtype=np.int8), np.array([0, 255], dtype=np.uint8), np.array([True, False])):
        _same(mg.bitwise_not(mg.tensor(x)), torch.bitwise_not(torch.from_numpy(x)))
        _same(mg.tensor(x).bitwise_not(), torch.from_numpy(x).bitwise_not())


@pytest.mark.parametrize("name", INTEGER_BINARY + ["bitwise_not"])
def test_integer_functions_refuse_floats_as_torch(name):
    operands = (torch.tensor([1.5]),) * (1 if name == "bitwise_not" else 2)
    with pytest.raises(RuntimeError):
        getattr(torch, name)(*operands)
    with pytest.raises(DtypeError, match=name):
        getattr(mg, name)(*(mg.tensor([1.5]),) * len(operands))


# --------------------------------------------------------------------------- ldexp, frexp, nextafter
def test_ldexp_matches_torch_to_second_order(rng):
    x, e = rng.standard_normal((2, 3)), rng.integers(-3, 4, 3).astype(np.float64)
    _compare(mg.ldexp, torch.ldexp, [x, e], second=True)
    # integer exponents ≥ 0: for a negative one, PyTorch's backward takes 2 ** other in integers (0)
    _compare(lambda a: a.ldexp(mg.tensor(np.array([1, 0, 3]))), lambda a: a.ldexp(torch.tensor([1, 0, 3])), [x], second=True)
    out, expected = mg.ldexp(mg.tensor([1, 3]), mg.tensor([2, -1])), torch.ldexp(torch.tensor([1, 3]), torch.tensor([2, -1]))
    assert out.dtype.kind == "f"
    np.testing.assert_array_equal(out.data, expected.numpy())


def test_frexp_matches_torch_with_its_gradient(rng):
    x = np.concatenate([rng.standard_normal(5) * 100, [0.0, -0.0, 1.0, 0.5, -3.0, 1e-310]])
    mantissa, exponent = mg.frexp(mg.tensor(x))
    expected = torch.frexp(torch.from_numpy(x))
    _same(mantissa, expected.mantissa)
    _same(exponent, expected.exponent)
    assert mg.tensor(x).frexp().exponent.dtype == np.int32
    _compare(lambda a: mg.frexp(a).mantissa, lambda a: torch.frexp(a).mantissa, [x[:5]], second=True)
    with pytest.raises(DtypeError):
        mg.frexp(mg.tensor([1, 2]))


def test_nextafter_matches_torch(rng):
    x = np.concatenate([rng.standard_normal(4), [0.0, 1.0, INF, -1.0]])
    y = np.concatenate([rng.standard_normal(4), [1.0, 0.0, 0.0, -INF]])
    for dtype in (np.float64, np.float32):
        _same(mg.nextafter(mg.tensor(x.astype(dtype)), mg.tensor(y.astype(dtype))), torch.nextafter(torch.from_numpy(x.astype(dtype)), torch.from_numpy(y.astype(dtype))))
    _same(mg.tensor(x).nextafter(mg.tensor(y)), torch.from_numpy(x).nextafter(torch.from_numpy(y)))


# --------------------------------------------------------------------------- prelu, renorm, unfold
def test_prelu_method_matches_torch_to_second_order(rng):
    x, w = rng.standard_normal((2, 3, 4)), rng.uniform(0.1, 0.5, 3)
    _compare(lambda a, b: a.prelu(b), lambda a, b: a.prelu(b), [x, w], second=True)


@pytest.mark.parametrize("p, dim, maxnorm", [(2, 0, 1.0), (1, 1, 2.0), (3, -1, 0.5), (2, 1, 100.0)])
def test_renorm_matches_torch_to_second_order(p, dim, maxnorm, rng):
    x = rng.standard_normal((3, 4, 2))
    _compare(lambda a: mg.renorm(a, p, dim, maxnorm), lambda a: torch.renorm(a, p, dim, maxnorm), [x], second=True)
    _compare(lambda a: a.renorm(p, dim, maxnorm), lambda a: a.renorm(p, dim, maxnorm), [x])


@pytest.mark.parametrize("shape, dimension, size, step", [((7,), 0, 3, 2), ((7,), 0, 7, 1), ((3, 8), 1, 2, 3), ((5, 4, 2), 0, 2, 1),
                                                           ((3, 4), -1, 1, 1), ((4, 6), 1, 0, 2), ((), 0, 1, 1)])
def test_unfold_matches_torch_to_second_order(shape, dimension, size, step, rng):
    x = rng.standard_normal(shape)
    _compare(lambda a: a.unfold(dimension, size, step), lambda a: a.unfold(dimension, size, step), [x], second=True)


@pytest.mark.parametrize("size, step", [(5, 1), (2, 0), (-1, 1)])
def test_unfold_refuses_bad_windows(size, step):
    with pytest.raises(RuntimeError):
        torch.ones(4).unfold(0, size, step)
    with pytest.raises(ShapeError, match="unfold"):
        mg.ones(4).unfold(0, size, step)


# --------------------------------------------------------------------------- cholesky_solve, cholesky_inverse
def _factor(rng, n, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + n * np.eye(n))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_cholesky_solve_and_inverse_match_torch_to_second_order(upper, batch, rng):
    factor = _factor(rng, 3, batch)
    factor = np.swapaxes(factor, -1, -2).copy() if upper else factor
    b = rng.standard_normal(batch + (3, 2))
    mask = np.triu(np.ones((3, 3))) if upper else np.tril(np.ones((3, 3)))  # perturb the triangle only
    _compare(lambda x, f: mg.cholesky_solve(x, f * mg.tensor(mask), upper=upper),
             lambda x, f: torch.cholesky_solve(x, f * torch.from_numpy(mask), upper=upper), [b, factor], second=True, atol=1e-9)
    _compare(lambda x, f: x.cholesky_solve(f * mg.tensor(mask), upper),
             lambda x, f: x.cholesky_solve(f * torch.from_numpy(mask), upper), [b, factor], atol=1e-9)
    _compare(lambda f: mg.cholesky_inverse(f * mg.tensor(mask), upper=upper),
             lambda f: torch.cholesky_inverse(f * torch.from_numpy(mask), upper=upper), [factor[0] if batch else factor], second=True, atol=1e-9)
    _compare(lambda f: (f * mg.tensor(mask)).cholesky_inverse(upper), lambda f: (f * torch.from_numpy(mask)).cholesky_inverse(upper), [factor], atol=1e-9)


def test_cholesky_inverse_reads_only_the_factors_triangle(rng):
    """Off the triangle PyTorch's gradient has the full-matrix formula's entries; minigrad's is 0 there."""
    factor = mg.tensor(_factor(rng, 3), requires_grad=True)
    np.testing.assert_allclose(mg.cholesky_inverse(factor).data, torch.cholesky_inverse(torch.from_numpy(factor.data)).numpy(), rtol=1e-12)
    mg.cholesky_inverse(factor).sum().backward()
    assert not np.triu(factor.grad.data, 1).any() and factor.grad.data[np.tril_indices(3)].all()


def test_cholesky_solve_refuses_a_non_square_factor():
    with pytest.raises(ShapeError, match="cholesky_solve"):
        mg.cholesky_solve(mg.ones((3, 1)), mg.ones((3, 2)))


# --------------------------------------------------------------------------- slice/select/diagonal_scatter
SCATTERS = [
    ("slice_scatter", (5, 4), lambda rng: rng.standard_normal((2, 4)), {"start": 1, "end": 5, "step": 2}),
    ("slice_scatter", (5, 4), lambda rng: rng.standard_normal((5, 2)), {"dim": 1, "start": -2}),
    ("slice_scatter", (3, 4), lambda rng: rng.standard_normal((3, 4)), {}),
    ("select_scatter", (3, 4, 2), lambda rng: rng.standard_normal((3, 2)), {"dim": 1, "index": -1}),
    ("select_scatter", (3, 4), lambda rng: rng.standard_normal(4), {"dim": 0, "index": 2}),
    ("diagonal_scatter", (3, 5), lambda rng: rng.standard_normal(3), {}),
    ("diagonal_scatter", (3, 5), lambda rng: rng.standard_normal(3), {"offset": 2}),
    ("diagonal_scatter", (4, 3, 2), lambda rng: rng.standard_normal((2, 3)), {"offset": -1, "dim1": 0, "dim2": 1}),
    ("diagonal_scatter", (2, 3, 3), lambda rng: rng.standard_normal((3, 2)), {"dim1": 2, "dim2": 0}),
]


@pytest.mark.parametrize("name, shape, make_src, keywords", SCATTERS)
def test_scatter_into_views_matches_torch_to_second_order(name, shape, make_src, keywords, rng):
    x, src = rng.standard_normal(shape), make_src(rng)
    _compare(lambda a, s: getattr(mg, name)(a, s, **keywords), lambda a, s: getattr(torch, name)(a, s, **keywords), [x, src], second=True)
    _compare(lambda a, s: getattr(a, name)(s, **keywords), lambda a, s: getattr(a, name)(s, **keywords), [x, src])


@pytest.mark.parametrize("name, src_shape, keywords", [("slice_scatter", (2, 4), {"start": 0, "end": 3}), ("select_scatter", (3,), {"dim": 0, "index": 1}),
                                                       ("select_scatter", (4,), {"dim": 0, "index": 5}), ("diagonal_scatter", (4,), {})])
def test_scatter_into_views_refuse_bad_shapes(name, src_shape, keywords):
    with pytest.raises((RuntimeError, IndexError)):
        getattr(torch, name)(torch.ones(3, 4, dtype=torch.float64), torch.ones(src_shape, dtype=torch.float64), **keywords)
    with pytest.raises(ShapeError):
        getattr(mg, name)(mg.ones((3, 4)), mg.ones(src_shape), **keywords)


def test_scatter_into_views_refuse_another_dtype():
    with pytest.raises(DtypeError):
        mg.slice_scatter(mg.ones((3, 4)), mg.ones((3, 4), dtype=np.float32))


# --------------------------------------------------------------------------- conjugates of real tensors
def test_conjugates_of_a_real_tensor_are_itself_and_mH_is_mT(rng):
    x = rng.standard_normal((2, 3, 4))
    for name in ("conj", "resolve_conj", "resolve_neg"):
        _compare(getattr(mg, name), getattr(torch, name), [x], second=True)
        _compare(lambda a: getattr(a, name)(), lambda a: getattr(a, name)(), [x], second=True)
    _compare(lambda a: a.mH, lambda a: a.mH, [x], second=True)
    _compare(lambda a: a.adjoint(), lambda a: a.adjoint(), [x], second=True)
    with pytest.raises(ShapeError):
        mg.ones(3).mH


def test_the_compositions_compile(rng):
    """The differentiable compositions trace: a compiled program recomputes them, and their
    gradients, on new inputs (fmax's NaN test and div's rounding included)."""
    from minigrad import jit

    def f(x, y):
        m = x.reshape(2, 3)
        terms = [mg.fmax(x, y), mg.fmin(x, y), mg.div(x, y, rounding_mode="trunc") * x, mg.div(x, y, rounding_mode="floor") * y,
                 mg.float_power(x.abs() + 1, y), mg.ldexp(x, y), mg.renorm(m, 2, 0, 1.0).reshape(-1), m.unfold(1, 2, 1).reshape(-1)[:6]]
        return sum(t.sum() for t in terms) + mg.cov(m).sum() + mg.corrcoef(m).sum() + mg.dist(x, y) + mg.addmv(y[:2], m, x[:3]).sum()

    def nan_ignoring(x, y):
        return (mg.fmax(x, y) * 2 + mg.fmin(x, y)).sum()

    for fn, with_nan in ((f, False), (nan_ignoring, True)):
        compiled = jit.compile(fn, backward=True)
        compiled(rng.standard_normal(6), rng.standard_normal(6))
        x, y = rng.standard_normal(6), rng.standard_normal(6)
        if with_nan:  # the NaN masks are recomputed: a finite value and gradients
            x[0] = y[1] = NAN
        value, grads = compiled(x, y)
        xs = [mg.tensor(x, requires_grad=True), mg.tensor(y, requires_grad=True)]
        expected = fn(*xs)
        assert np.isfinite(value.data)
        np.testing.assert_allclose(value.data, expected.data, rtol=1e-12)
        for g, want in zip(grads, mg.gradients(expected, xs)):
            np.testing.assert_allclose(g.data, want.data, rtol=1e-12)


def test_the_bitwise_operators_combine_masks_and_integers_as_torch():
    """`(x > 0) & (x < 2)`, `|`, `^`, `~` with tensors and Python numbers on either side: logical on
    bool tensors, bitwise on integers, as torch's; a float operand is refused by name."""
    masks = np.array([True, False, True, False]), np.array([True, True, False, False])
    integers = np.array([5, 3, -8, 0]), np.array([6, 1, 3, -1])
    for a, b in (masks, integers):
        x, y, tx, ty = mg.tensor(a), mg.tensor(b), torch.tensor(a), torch.tensor(b)
        for ours, theirs in ((x & y, tx & ty), (x | y, tx | ty), (x ^ y, tx ^ ty), (~x, ~tx), (x & b[0].item(), tx & b[0].item()),
                             (a[0].item() | y, a[0].item() | ty), (True ^ x if a.dtype == bool else 3 ^ x, True ^ tx if a.dtype == bool else 3 ^ tx)):
            np.testing.assert_array_equal(ours.data, theirs.numpy())
            assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    values = mg.tensor([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_array_equal(values[(values > 0) & (values < 2)].data, [1.0, 0.5])
    with pytest.raises(mg.DtypeError, match="bitwise_and: needs integer or bool tensors, got float64"):
        values & values
