"""Imported at start-up by a custom runtime's server when it runs on Python (``PYTHONPATH`` set by
``custom_supervisor.py``): the function's SDK calls are routed to the emulator and its network
rules apply, as in the Python runtime (``routing.py`` + ``cloud_access.py``, loaded by path).
The settings come in ``_FC_LOCAL_ROUTING`` (JSON: endpoint, hosts, internetAccess); without it,
or on a Python these modules do not support, nothing happens (a line on stderr says why).
"""

import json
import os
import sys


def _install() -> None:
    raw = os.environ.get("_FC_LOCAL_ROUTING")
    if not raw:
        return
    import importlib.util

    settings = json.loads(raw)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for name in ("routing", "cloud_access"):
        spec = importlib.util.spec_from_file_location(
            f"_fc_emulator_{name}", os.path.join(here, f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    sys.modules["_fc_emulator_cloud_access"].install_cloud_routing(
        settings["endpoint"], internet_access=settings.get("internetAccess", True))


try:
    _install()
except Exception as exc:  # never stop the function's server from starting
    print(f"cloud routing not installed in this server: {exc}", file=sys.stderr)
