"""Links from the CLI to a console: the emulator's web console, or CloudFlow's on Alibaba Cloud.

The local emulator serves ``/_console/`` on its own endpoint; the region is part of the path.
On Alibaba Cloud the CloudFlow console's flow page is
``https://fnf.console.aliyun.com/fnf/<region>/flows/item/<flow>`` (seen in Alibaba's own samples);
the execution page below it is INFERRED (``…/executions/item/<name>``), see docs/console.md.
"""

from __future__ import annotations

from urllib.parse import quote

from deployer.cloud.connection import Endpoints

__all__ = ["CLOUDFLOW_CONSOLE", "console_root", "execution_url"]

CLOUDFLOW_CONSOLE = "https://fnf.console.aliyun.com/fnf"


def _q(text: str) -> str:
    return quote(text, safe="")


def console_root(endpoints: Endpoints, region: str) -> str:
    """The console's page listing the flows of ``region``."""
    if endpoints.is_local:
        return f"http://{endpoints.fnf}/_console/r/{_q(region)}/flows"
    return f"{CLOUDFLOW_CONSOLE}/{_q(region)}/flows"


def execution_url(endpoints: Endpoints, region: str, flow: str, name: str) -> str:
    """The console page of execution ``name`` of ``flow`` (its graph, states and events)."""
    if endpoints.is_local:
        return (f"http://{endpoints.fnf}/_console/r/{_q(region)}/flows/{_q(flow)}"
                f"/executions/{_q(name)}")
    return f"{CLOUDFLOW_CONSOLE}/{_q(region)}/flows/item/{_q(flow)}/executions/item/{_q(name)}"
