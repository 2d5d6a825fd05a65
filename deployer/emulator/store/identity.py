"""The emulator's account identity: ``<state_dir>/identity.json`` (mode 0600).

Generated on first start: a stable 16-digit account id and one AccessKey pair — the only
credentials the emulator accepts. They are local fakes, never valid in the cloud.
"""

from __future__ import annotations

import json
import os
import secrets
import string
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["Identity", "load_or_create_identity"]

IDENTITY_FILE = "identity.json"


@dataclass(frozen=True, slots=True)
class Identity:
    account_id: str
    access_key_id: str
    access_key_secret: str

    def secret_for(self, access_key_id: str) -> str | None:
        """The secret of ``access_key_id``, or None when the key is unknown."""
        return self.access_key_secret if access_key_id == self.access_key_id else None


def _generate() -> Identity:
    alphabet = string.ascii_letters + string.digits
    account = str(secrets.randbelow(9 * 10**15) + 10**15)
    key_id = "LTAI5tEMU" + "".join(secrets.choice(alphabet) for _ in range(15))
    secret = "".join(secrets.choice(alphabet) for _ in range(30))
    return Identity(account, key_id, secret)


def load_or_create_identity(state_dir: Path) -> Identity:
    """Read the identity of ``state_dir``, creating it (0600) on first use."""
    path = state_dir / IDENTITY_FILE
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
        return Identity(data["account_id"], data["access_key_id"], data["access_key_secret"])
    state_dir.mkdir(parents=True, exist_ok=True)
    identity = _generate()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(asdict(identity), fh, indent=2)
    return identity
