"""The SDK routing ``mock_cloud()`` installs, for tests that install one themselves.

One module routes Alibaba Cloud SDK traffic for ``mock_cloud()`` and for the emulator's function
workers alike: :mod:`deployer.emulator.runtime.routing` (the host table, the routing decision,
the wrappers of ``requests``' and ``aiohttp``'s public request methods; see its docstring).
This module is its public name in ``deployer.testing``::

    with install({EMULATED_HOSTS: "127.0.0.1:9125"}):
        ...  # SDK clients on their default endpoints reach the emulator at 127.0.0.1:9125
"""

from deployer.emulator.runtime.routing import (
    EMULATED_HOSTS,
    EMULATED_SERVICES,
    CloudEndpointNotEmulated,
    Routing,
    UnmockedRequestError,
    install,
)

__all__ = [
    "EMULATED_HOSTS",
    "EMULATED_SERVICES",
    "CloudEndpointNotEmulated",
    "Routing",
    "UnmockedRequestError",
    "install",
]
