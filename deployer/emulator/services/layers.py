"""Function Compute layers: publishing versions from a zip, reading, listing, deleting, the
ACL, and where a function's layer ARNs find their content (no HTTP).

FC's layer API (fc3-api.md §2; FC docs "Create a custom layer"): each CreateLayerVersion
publishes the next version of a layer (1, 2, ...; a deleted version's number is not given
out again), with its compatible runtimes, description and licence; a version's ARN is
``acs:fc:<region>:<account>:layers/<name>/versions/<n>``. ``PutLayerACL`` makes a layer public
(other accounts may use it) or private again; locally the only accounts are the emulator's,
so public matters for ``ListLayers(public=true)`` and the ARNs other accounts of the same
emulator resolve. Official layers (``acs:fc:<region>:official:layers/...``) and layers of
accounts this emulator does not hold cannot exist offline: a function naming one is refused
at Create/UpdateFunction, naming the ARN.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass

from deployer.emulator.clock import Clock
from deployer.emulator.records import LayerVersionRow
from deployer.emulator.services.errors import InvalidValue, Resource, ResourceNotFound
from deployer.emulator.services.functions.rules import RUNTIMES, check_zip
from deployer.emulator.services.ports import LayerSource
from deployer.emulator.store.layer_repos import LayerRepo
from deployer.emulator.store.repos import CodeStore

__all__ = ["LayerInput", "LayerService", "LayerVersionRow", "parse_layer_arn"]

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")  # INFERRED: FC's console rule
ARN_RE = re.compile(r"^acs:fc:([a-z0-9-]+):([A-Za-z0-9]+):layers/([A-Za-z0-9_-]{1,128})"
                    r"/versions/([0-9]{1,9})$")


@dataclass(frozen=True, slots=True)
class LayerInput:
    """CreateLayerVersion's fields (the code as zip bytes)."""

    code: bytes
    compatible_runtimes: tuple[str, ...] = ()
    description: str = ""
    license: str = ""


def parse_layer_arn(arn: str) -> tuple[str, str, str, int]:
    """(region, account, layer name, version) of a layer version ARN; InvalidValue."""
    m = ARN_RE.match(arn)
    if m is None:
        raise InvalidValue(f"'{arn}' is not a layer version ARN (acs:fc:<region>:<account>:"
                           "layers/<name>/versions/<n>)", field="layers")
    return m.group(1), m.group(2), m.group(3), int(m.group(4))


class LayerService:
    """Layer versions over :class:`LayerRepo`; contents in the :class:`CodeStore`."""

    def __init__(self, repo: LayerRepo, code: CodeStore, clock: Clock) -> None:
        self._repo = repo
        self._code = code
        self._clock = clock

    def create_version(self, account_id: str, region: str, name: str,
                       spec: LayerInput) -> LayerVersionRow:
        if not _NAME_RE.match(name):
            raise InvalidValue(f"invalid layer name '{name}': 1-64 letters, digits, '_' or "
                               "'-', starting with a letter or '_'", field="layerName")
        unknown = [r for r in spec.compatible_runtimes if r not in RUNTIMES]
        if unknown:
            raise InvalidValue(f"compatibleRuntime '{unknown[0]}' is not a runtime of "
                               "Function Compute", field="compatibleRuntime")
        if len(spec.description) > 256:
            raise InvalidValue("description must be at most 256 characters",
                               field="description")
        check_zip(spec.code)
        checksum = self._code.put(spec.code)
        return self._repo.publish(account_id, region, name, {
            "description": spec.description, "license": spec.license,
            "compatible_runtimes": spec.compatible_runtimes, "code_checksum": checksum,
            "code_size": len(spec.code)}, self._clock.now())

    def get_version(self, account_id: str, region: str, name: str,
                    version: int) -> LayerVersionRow:
        found = self._repo.get(account_id, region, name, version)
        if found is None:
            raise ResourceNotFound(f"layer '{name}' version {version} does not exist",
                                   Resource.LAYER, name=name)
        return found

    def by_arn(self, account_id: str, region: str, arn: str) -> LayerVersionRow:
        """The version ``arn`` names, as ``account_id`` may see it (its own, or public)."""
        arn_region, owner, name, version = parse_layer_arn(arn)
        if owner == "official":
            raise ResourceNotFound(f"layer {arn} is an official Function Compute layer, which does "
                                   "not exist offline; publish its content as a layer of your own "
                                   "(a directory in the function's layers)",
                                   Resource.LAYER, name=arn)
        found = self._repo.get(owner, arn_region, name, version)
        if found is None or (owner != account_id and not found.public):
            whose = "" if owner == account_id else (
                f" (it belongs to account {owner}, whose layers this emulator does not hold)")
            raise ResourceNotFound(f"layer version {arn} does not exist in the local "
                                   f"emulator{whose}",
                                   Resource.LAYER, name=arn)
        return found

    def list_versions(self, account_id: str, region: str, name: str, *, start_version: int = 1,
                      limit: int = 20) -> tuple[builtins.list[LayerVersionRow], int | None]:
        """Versions from ``start_version`` on, and the next page's first version."""
        if not 1 <= limit <= 100:
            raise InvalidValue(f"limit must be between 1 and 100, got {limit}", field="limit")
        rows = self._repo.versions(account_id, region, name, start=start_version,
                                   limit=limit + 1)
        if not rows and start_version <= 1:
            raise ResourceNotFound(f"layer '{name}' does not exist",
                                   Resource.LAYER, name=name)
        return rows[:limit], rows[limit].version if len(rows) > limit else None

    def list_layers(self, account_id: str, region: str, *, prefix: str = "",
                    next_token: str = "", limit: int = 20, public: bool = False,
                    official: bool = False) -> tuple[builtins.list[LayerVersionRow], str]:
        """The newest version of each layer; ``official``: none exist offline."""
        if not 1 <= limit <= 100:
            raise InvalidValue(f"limit must be between 1 and 100, got {limit}", field="limit")
        if official:
            return [], ""
        rows = self._repo.latest(account_id, region, prefix=prefix, start=next_token,
                                 limit=limit + 1, public_only=public)
        return rows[:limit], rows[limit].name if len(rows) > limit else ""

    def delete_version(self, account_id: str, region: str, name: str, version: int) -> None:
        if not self._repo.delete(account_id, region, name, version):
            raise ResourceNotFound(f"layer '{name}' version {version} does not exist",
                                   Resource.LAYER, name=name)

    def put_acl(self, account_id: str, region: str, name: str, public: bool) -> None:
        if not self._repo.set_public(account_id, region, name, public):
            raise ResourceNotFound(f"layer '{name}' does not exist",
                                   Resource.LAYER, name=name)

    def check_function_layers(self, account_id: str, region: str,
                              arns: tuple[str, ...]) -> None:
        """Every ARN a function names must resolve (NotFound / InvalidValue naming it)."""
        for arn in arns:
            self.by_arn(account_id, region, arn)

    def layer_source(self, account_id: str, region: str, arn: str) -> LayerSource | None:
        """Where the content of ``arn`` is, for the runtime (None: it does not resolve)."""
        try:
            found = self.by_arn(account_id, region, arn)
        except (ResourceNotFound, InvalidValue):
            return None
        return LayerSource(arn, found.code_checksum, self._code.path(found.code_checksum))
