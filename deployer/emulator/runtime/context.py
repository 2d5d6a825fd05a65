"""The ``context`` handed to handlers, in the shape of the function's runtime (fc3-api.md §8.5).

Loaded by path inside the worker (standard library only).

* ``python3``, ``python3.9``, ``python3.10``: ``request_id``, ``credentials`` (role keys, with
  camelCase aliases), ``function`` (name, handler, memory, timeout), ``service`` (FC 3.0 has no
  services: name ``""``, ``qualifier``, ``version_id``, log project/store), ``region``,
  ``account_id``, ``retry_count``, ``tracing``.
* ``python3.12``: ``request_id``, ``function`` (name, handler, memory, timeout, ``qualifier``,
  ``version_id``), ``region``, ``account_id``, ``log_project``, ``log_store``, ``logger``
  (``None`` until ``getLogger()`` is called) and ``getLogger()``. No ``credentials`` and no
  ``service``: code reads ``ALIBABA_CLOUD_*`` from the environment instead.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["make_context", "shape_of"]


class _Record:
    """Attribute bag with camelCase aliases, like the runtime's context classes."""

    _aliases: dict[str, str] = {}  # noqa: RUF012

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __getattr__(self, name: str) -> Any:
        alias = type(self)._aliases.get(name)
        if alias is None:
            raise AttributeError(name)
        return self.__dict__[alias]

    def __repr__(self) -> str:
        shown = {k: ("***" if k == "access_key_secret" and v else v)
                 for k, v in self.__dict__.items()}
        return f"{type(self).__name__}({shown!r})"


class ContextCredentials(_Record):
    _aliases = {  # noqa: RUF012
        "accessKeyId": "access_key_id",
        "accessKeySecret": "access_key_secret",
        "securityToken": "security_token",
    }


class FunctionMeta(_Record):
    _aliases = {"versionId": "version_id"}  # noqa: RUF012


class ServiceMeta(_Record):
    _aliases = {  # noqa: RUF012
        "logProject": "log_project", "logStore": "log_store", "versionId": "version_id",
    }


class Tracing(_Record):
    _aliases = {  # noqa: RUF012
        "spanContext": "span_context",
        "jaegerEndpoint": "jaeger_endpoint",
        "spanBaggages": "span_baggages",
    }


class FCContext(_Record):
    _aliases = {"requestId": "request_id", "accountId": "account_id"}  # noqa: RUF012


class FCContext312(FCContext):
    _aliases = {  # noqa: RUF012
        "requestId": "request_id", "accountId": "account_id",
        "logProject": "log_project", "logStore": "log_store",
    }

    def getLogger(self) -> logging.Logger:
        """The function's logger (records carry the request id); also sets ``logger``."""
        logger = logging.getLogger("fc")
        self.__dict__["logger"] = logger
        return logger


def shape_of(runtime: str) -> str:
    """``"3.12"`` for runtimes with the 3.12 context, else ``"3.10"``."""
    return "3.12" if runtime == "python3.12" else "3.10"


def make_context(config: dict[str, Any], request_id: str,
                 credentials: dict[str, str] | None) -> FCContext:
    """The context of one request; ``credentials`` None means none are passed in requests."""
    creds = credentials or {}
    function = {"name": config["function_name"], "handler": config["handler"],
                "memory": config["memory_size"], "timeout": config["timeout"]}
    if shape_of(config["runtime"]) == "3.12":
        return FCContext312(
            request_id=request_id,
            function=FunctionMeta(**function, qualifier=config["qualifier"],
                                  version_id=config["version_id"]),
            region=config["region"], account_id=config["account_id"],
            log_project="", log_store="", logger=None,
        )
    return FCContext(
        request_id=request_id,
        credentials=ContextCredentials(access_key_id=creds.get("access_key_id", ""),
                                access_key_secret=creds.get("access_key_secret", ""),
                                security_token=creds.get("security_token", "")),
        function=FunctionMeta(**function),
        service=ServiceMeta(name="", log_project="", log_store="",
                            qualifier=config["qualifier"], version_id=config["version_id"]),
        region=config["region"], account_id=config["account_id"], retry_count=0,
        tracing=Tracing(span_context="", jaeger_endpoint="", span_baggages={}),
    )
