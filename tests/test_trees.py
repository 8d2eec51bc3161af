"""_trees: paths and leaves of nested containers, framework arrays kept whole."""

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

from course_utils._trees import is_jax_array, is_torch_tensor, leaves_with_paths


class Pair(NamedTuple):
    left: object
    right: object


@dataclasses.dataclass
class Box:
    inside: object
    label: str = "box"


def test_mixed_dict_list_tuple_tree_in_order():
    tree = {"a": [1, (2, {"b": 3})], "c": (), "d": "text"}
    assert list(leaves_with_paths(tree)) == [
        ("['a'][0]", 1),
        ("['a'][1][0]", 2),
        ("['a'][1][1]['b']", 3),
        ("['d']", "text"),
    ]


def test_named_tuples_and_dataclasses_use_field_names():
    tree = [Pair(np.zeros(2), Box({"k": 5}))]
    paths = [p for p, _ in leaves_with_paths(tree, prefix="opt")]
    assert paths == ["opt[0].left", "opt[0].right.inside['k']", "opt[0].right.label"]


def test_a_lone_leaf_has_the_prefix_as_its_path():
    assert list(leaves_with_paths(7, prefix="x")) == [("x", 7)]
    arr = np.arange(3)
    ((path, leaf),) = leaves_with_paths(arr)
    assert path == "" and leaf is arr


def test_framework_arrays_are_leaves_not_containers():
    torch = pytest.importorskip("torch")
    jnp = pytest.importorskip("jax.numpy")
    t, j = torch.ones(2, 2), jnp.ones((2, 2))
    assert is_torch_tensor(t) and not is_jax_array(t)
    assert is_jax_array(j) and not is_torch_tensor(j)
    assert not is_jax_array(np.ones(2)) and not is_torch_tensor(np.ones(2))
    leaves = dict(leaves_with_paths({"t": t, "j": [j]}))
    assert leaves["['t']"] is t and leaves["['j'][0]"] is j


def test_a_registered_dataclass_is_walked_by_its_field_names():
    jax = pytest.importorskip("jax")

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class State:
        w: object
        b: object

    state = State(w=np.ones(2), b=np.zeros(1))
    state = jax.tree_util.tree_map(lambda x: x, state)
    # a registered dataclass is a dataclass too: walked by its field names
    assert [p for p, _ in leaves_with_paths(state)] == [".w", ".b"]
