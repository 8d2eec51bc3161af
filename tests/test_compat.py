"""course_utils.compat: each helper on the installed jax/flax, and its other branch with fakes."""

import contextlib
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
nnx = pytest.importorskip("flax.nnx")
jax_experimental = pytest.importorskip("jax.experimental")

import jax.numpy as jnp  # noqa: E402

from course_utils import compat  # noqa: E402


def test_importing_compat_imports_no_framework():
    code = "import sys, course_utils.compat; print([m for m in ('jax', 'flax') if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------- enable_x64


def test_enable_x64_turns_64_bit_on_inside_the_block_only():
    assert jnp.arange(3).dtype == jnp.int32
    with compat.enable_x64():
        assert jnp.arange(3).dtype == jnp.int64
        assert int((jnp.asarray(np.arange(100_000)) ** 2).sum()) == int(
            (np.arange(100_000) ** 2).sum()
        )
    assert jnp.arange(3).dtype == jnp.int32


def test_enable_x64_false_keeps_32_bit():
    with compat.enable_x64(), compat.enable_x64(False):
        assert jnp.arange(3).dtype == jnp.int32


def _recording_context(calls):
    @contextlib.contextmanager
    def fake(new_val=True):
        calls.append(("enter", new_val))
        try:
            yield
        finally:
            calls.append(("exit", new_val))

    return fake


def test_enable_x64_uses_jax_enable_x64_when_present(monkeypatch):
    calls = []
    monkeypatch.setattr(jax, "enable_x64", _recording_context(calls), raising=False)
    monkeypatch.setattr(
        jax_experimental, "enable_x64", _recording_context([]), raising=False
    )
    with compat.enable_x64(False):
        calls.append("body")
    assert calls == [("enter", False), "body", ("exit", False)]


def test_enable_x64_falls_back_to_jax_experimental(monkeypatch):
    """jax 0.7 has only jax.experimental.enable_x64."""
    calls = []
    monkeypatch.delattr(jax, "enable_x64", raising=False)
    monkeypatch.setattr(
        jax_experimental, "enable_x64", _recording_context(calls), raising=False
    )
    with compat.enable_x64():
        calls.append("body")
    assert calls == [("enter", True), "body", ("exit", True)]


def test_enable_x64_exits_the_context_when_the_body_raises(monkeypatch):
    calls = []
    monkeypatch.setattr(jax, "enable_x64", _recording_context(calls), raising=False)
    with pytest.raises(ZeroDivisionError), compat.enable_x64():
        1 / 0  # noqa: B018
    assert calls == [("enter", True), ("exit", True)]


# ------------------------------------------------------ get_value / set_value


def test_set_value_replaces_a_concrete_param():
    param = nnx.Param(jnp.zeros(3))
    compat.set_value(param, jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(compat.get_value(param)), [0.0, 1.0, 2.0])
    assert isinstance(compat.get_value(param), jax.Array)


def test_set_value_fills_an_abstract_model():
    """nnx.eval_shape gives variables without arrays; loading weights replaces them whole."""
    model = nnx.eval_shape(lambda: nnx.Linear(3, 2, rngs=nnx.Rngs(0)))
    assert isinstance(compat.get_value(model.kernel), jax.ShapeDtypeStruct)
    kernel = jnp.arange(6.0).reshape(3, 2)
    compat.set_value(model.kernel, kernel)
    compat.set_value(model.bias, jnp.ones(2))
    out = model(jnp.ones((1, 3)))
    np.testing.assert_allclose(
        np.asarray(out), np.ones((1, 3)) @ np.asarray(kernel) + 1.0
    )


def test_set_value_can_change_the_shape():
    param = nnx.Param(jnp.zeros(3))
    compat.set_value(param, jnp.ones((2, 2)))
    assert compat.get_value(param).shape == (2, 2)


class _NewVariable:
    """Flax >= 0.12: get_value/set_value methods; .value is deprecated."""

    def __init__(self, value):
        self._v = value

    def get_value(self):
        return self._v

    def set_value(self, value):
        self._v = value

    @property
    def value(self):
        raise AssertionError("'.value' is deprecated on new flax; use get_value()")

    @value.setter
    def value(self, _):
        raise AssertionError("'.value' is deprecated on new flax; use set_value()")


class _OldVariable:
    """Flax 0.11: a .value property; attribute look-ups fall through to the array."""

    def __init__(self, value):
        self.value = value

    def __getattr__(self, name):  # as flax 0.11's Variable forwards to its raw value
        return getattr(self.__dict__["value"], name)


@pytest.mark.parametrize(
    "cls", [_NewVariable, _OldVariable], ids=["flax>=0.12", "flax 0.11"]
)
def test_get_and_set_value_on_both_variable_apis(cls):
    var = cls(np.zeros(2))
    compat.set_value(var, np.array([4.0, 5.0]))
    np.testing.assert_array_equal(compat.get_value(var), [4.0, 5.0])


def test_old_api_is_not_mistaken_for_new_when_the_value_has_set_value():
    """An attribute forwarded from the wrapped value must not count as the new API."""

    class Holder:
        def set_value(self, _):
            raise AssertionError("called the value's method, not the variable's")

        def get_value(self):
            raise AssertionError("called the value's method, not the variable's")

    var = _OldVariable(Holder())
    assert hasattr(var, "set_value")  # forwarded, as flax 0.11 would
    compat.set_value(var, 3)
    assert compat.get_value(var) == 3


def test_to_varying_uses_pcast_or_falls_back_to_pvary(monkeypatch):
    import jax

    calls = []
    monkeypatch.setattr(
        jax.lax,
        "pcast",
        lambda x, axis, to: calls.append(("pcast", axis, to)) or x,
        raising=False,
    )
    assert compat.to_varying(1.0, "data") == 1.0 and calls == [
        ("pcast", "data", "varying")
    ]
    monkeypatch.delattr(jax.lax, "pcast")
    monkeypatch.setattr(
        jax.lax,
        "pvary",
        lambda x, axis: calls.append(("pvary", axis)) or x,
        raising=False,
    )
    assert compat.to_varying(2.0, "data") == 2.0 and calls[-1] == ("pvary", "data")


class _Block(nnx.Module):
    def __init__(self):
        self.linear = nnx.Linear(4, 4, rngs=nnx.Rngs(0))
        self.dropout = nnx.Dropout(0.5, rngs=nnx.Rngs(dropout=1))
        self.norm = nnx.BatchNorm(4, rngs=nnx.Rngs(0))

    def __call__(self, x):
        return self.norm(self.dropout(self.linear(x)))


def _check_eval_view(block):
    view = compat.eval_view(block)
    assert view.dropout.deterministic and view.norm.use_running_average
    assert not block.dropout.deterministic and not block.norm.use_running_average
    assert view.linear.kernel[...] is block.linear.kernel[...]  # the same array
    x = jnp.ones((3, 4))
    np.testing.assert_array_equal(view(x), view(x))  # no dropout: the same twice


def test_eval_view_leaves_the_module_in_training_mode():
    _check_eval_view(_Block())


def test_eval_view_without_nnx_view_uses_a_merged_copy(monkeypatch):
    monkeypatch.delattr(nnx, "view", raising=False)  # as on flax 0.11
    _check_eval_view(_Block())


# ----------------------------------------------------------------- cost_flops


def test_cost_flops_counts_a_matmul_on_the_installed_jax():
    a = jnp.ones((8, 16))
    b = jnp.ones((16, 4))
    compiled = jax.jit(jnp.matmul).lower(a, b).compile()
    assert compiled.cost_analysis() is not None
    assert compat.cost_flops(compiled) == 2 * 8 * 16 * 4


class _FakeCompiled:
    def __init__(self, costs):
        self._costs = costs

    def cost_analysis(self):
        return self._costs


@pytest.mark.parametrize(
    ("costs", "flops"),
    [
        ({"flops": 10.0}, 10.0),
        ([{"flops": 10.0}, {"flops": 2.0}], 12.0),  # older jax: one dict per program
        ([{"bytes accessed": 4.0}], 0.0),
        (None, 0.0),
    ],
)
def test_cost_flops_reads_a_dict_or_a_list_of_dicts(costs, flops):
    assert compat.cost_flops(_FakeCompiled(costs)) == flops


def test_single_device_sharding_places_a_whole_array_on_the_device():
    import jax
    import jax.numpy as jnp

    device = jax.devices()[0]
    sharding = compat.single_device_sharding(device)
    x = jax.device_put(jnp.arange(4.0), sharding)
    assert x.devices() == {device} and sharding.is_fully_replicated


def test_single_device_sharding_falls_back_where_jax_lacks_the_new_name(monkeypatch):
    import jax

    device = jax.devices()[0]
    monkeypatch.delattr(jax.sharding, "make_single_device_sharding", raising=False)
    sharding = compat.single_device_sharding(device)
    assert isinstance(sharding, jax.sharding.NamedSharding)
    x = jax.device_put(jnp.arange(4.0), sharding)
    assert x.devices() == {device} and sharding.is_fully_replicated
    assert sharding.device_set == {device}


def test_pallas_is_jax_pallas_where_present_else_jax_experimental_pallas(monkeypatch):
    import importlib.util
    import sys

    expected = (
        "jax.pallas"
        if importlib.util.find_spec("jax.pallas")
        else "jax.experimental.pallas"
    )
    assert compat.pallas().__name__ == expected
    assert callable(compat.pallas().pallas_call)
    import jax
    import jax.experimental.pallas  # noqa: F401 - loaded while jax.pallas still is

    monkeypatch.delattr(jax, "pallas", raising=False)  # a jax before 0.12
    monkeypatch.setitem(sys.modules, "jax.pallas", None)
    assert compat.pallas().__name__ == "jax.experimental.pallas"
