"""Function Compute layer versions in the emulator's domain: publish, read, list, delete,
ACL, and the ARNs a function may name."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from deployer.emulator.app import Emulator
from deployer.emulator.clock import VirtualClock
from deployer.emulator.services.errors import InvalidValue, ResourceNotFound
from deployer.emulator.services.layers import LayerInput


def _zip(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("python/lib.py", text)
    return buffer.getvalue()


@pytest.fixture
def emulator(tmp_path: Path):
    emu = Emulator(tmp_path / "state", VirtualClock(1_700_000_000.0))
    yield emu
    emu.close()


def test_versions_count_up_and_are_never_reused(emulator: Emulator) -> None:
    layers, a = emulator.layers, emulator.identity.account_id
    one = layers.create_version(a, "cn-hangzhou", "deps", LayerInput(_zip("1"), ("python3.10",),
                                                                      "first", "MIT"))
    two = layers.create_version(a, "cn-hangzhou", "deps", LayerInput(_zip("2")))
    layers.delete_version(a, "cn-hangzhou", "deps", 2)
    three = layers.create_version(a, "cn-hangzhou", "deps", LayerInput(_zip("3")))
    page, following = layers.list_versions(a, "cn-hangzhou", "deps", limit=1)
    assert (one.version, two.version, three.version) == (1, 2, 3)
    assert one.compatible_runtimes == ("python3.10",) and one.license == "MIT"
    assert one.arn == f"acs:fc:cn-hangzhou:{a}:layers/deps/versions/1"
    assert [v.version for v in page] == [1] and following == 3
    assert layers.get_version(a, "cn-hangzhou", "deps", 3).code_size == len(_zip("3"))
    with pytest.raises(ResourceNotFound, match="version 2 does not exist"):
        layers.get_version(a, "cn-hangzhou", "deps", 2)


def test_listing_acl_and_the_arns_a_function_may_name(emulator: Emulator) -> None:
    layers, a = emulator.layers, emulator.identity.account_id
    for name in ("alpha", "beta"):
        layers.create_version(a, "cn-hangzhou", name, LayerInput(_zip(name)))
    layers.create_version(a, "cn-hangzhou", "beta", LayerInput(_zip("beta2")))
    latest, token = layers.list_layers(a, "cn-hangzhou", limit=1)
    assert [(v.name, v.version) for v in latest] == [("alpha", 1)] and token == "beta"
    assert layers.list_layers(a, "cn-hangzhou", public=True)[0] == []
    layers.put_acl(a, "cn-hangzhou", "beta", True)
    (public,), _ = layers.list_layers(a, "cn-hangzhou", public=True)
    assert (public.name, public.version, public.public) == ("beta", 2, True)
    other = "1111111111111111"
    assert layers.by_arn(other, "cn-hangzhou", public.arn) == public
    private = f"acs:fc:cn-hangzhou:{a}:layers/alpha/versions/1"
    with pytest.raises(ResourceNotFound, match=f"belongs to account {a}"):
        layers.by_arn(other, "cn-hangzhou", private)
    with pytest.raises(ResourceNotFound, match="official Function Compute layer"):
        layers.check_function_layers(a, "cn-hangzhou",
                                     ("acs:fc:cn-hangzhou:official:layers/Nodejs18/versions/1",))
    with pytest.raises(InvalidValue, match="not a layer version ARN"):
        layers.check_function_layers(a, "cn-hangzhou", ("layers/alpha",))
    with pytest.raises(InvalidValue, match="invalid layer name"):
        layers.create_version(a, "cn-hangzhou", "9lives", LayerInput(_zip("x")))
    source = layers.layer_source(a, "cn-hangzhou", private)
    assert source is not None and source.path.is_file()
