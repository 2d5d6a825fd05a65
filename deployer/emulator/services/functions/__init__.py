"""Function Compute 3.0's domain: functions, their code, their versions and their invocations.

No HTTP here: the API layer (``emulator/api/fc.py``) passes typed values and gets
:class:`Function` and :class:`InvocationOutcome` back. The parts, by what they decide:

* ``service``: :class:`FunctionService`, the front every caller uses (create, read, update,
  delete, list, invoke, recent invocations);
* ``model``: the values it hands out (:class:`Function`, :class:`FunctionSettings`,
  :class:`InvocationOutcome`) and ``rules``: what a function's settings and code may be;
* ``versions``: published versions and aliases (:class:`FunctionReleases`);
* ``resolution``: a name and a qualifier to what runs (the settings a version froze, the role
  keys an instance gets: ``roles``, the role FC assumes);
* ``invocations``: running an invocation in the injected runtime and recording it,
  asynchronous ones on a bounded pool.

Time comes from the injected clock; handlers run in the injected ``FunctionRuntime``.
"""

from deployer.emulator.services.functions.model import Function, FunctionSettings, InvocationOutcome
from deployer.emulator.services.functions.service import FunctionService
from deployer.emulator.services.functions.versions import FunctionReleases

__all__ = ["Function", "FunctionReleases", "FunctionService", "FunctionSettings",
           "InvocationOutcome"]
