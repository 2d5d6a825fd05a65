"""What every component's props share: the regions a project can use and fc3's cpu default.

The props themselves are tables, one entry per prop: :mod:`deployer.config.fc3` (functions)
and :mod:`deployer.config.flow_props` (flows).
"""

from __future__ import annotations

import math

from deployer.config.props import PropReader

__all__ = ["CLOUDFLOW_REGIONS", "FC_REGIONS", "ROLE_ARN", "ROLE_NAME", "check_region",
           "default_cpu"]

ROLE_NAME = r"[A-Za-z0-9.-]{1,64}"
ROLE_ARN = r"acs:ram::\d+:role/.+"

CLOUDFLOW_REGIONS = (
    "cn-hangzhou", "cn-shanghai", "cn-beijing", "cn-qingdao", "cn-shenzhen",
    "ap-southeast-1", "us-west-1",
)
FC_REGIONS = frozenset({
    *CLOUDFLOW_REGIONS, "cn-zhangjiakou", "cn-huhehaote", "cn-chengdu", "cn-hongkong",
    "cn-wulanchabu", "ap-southeast-2", "ap-southeast-3", "ap-southeast-5", "ap-southeast-7",
    "ap-northeast-1", "ap-northeast-2", "ap-south-1", "eu-central-1", "eu-west-1", "us-east-1",
    "me-central-1", "cn-heyuan-acdr-1", "cn-shanghai-finance-1",
})


def check_region(reader: PropReader) -> str | None:
    """The ``region`` prop, which must be one where both FC 3.0 and CloudFlow exist."""
    region = reader.string("region", required=True)
    if region is None or region in CLOUDFLOW_REGIONS:
        return region
    where = "Function Compute 3.0 but no CloudFlow" if region in FC_REGIONS else "no known"
    reader.error(
        "region",
        f"region {region!r} has {where} service; this project needs both, "
        f"use one of: {', '.join(CLOUDFLOW_REGIONS)}",
    )
    return None


def default_cpu(memory_mb: int) -> float:
    """fc3's default of 0.35 vCPU, moved into the allowed memory(GB)/cpu ratio range [1, 4]."""
    gigabytes = memory_mb / 1024
    low = math.ceil(round(gigabytes / 4 / 0.05, 6)) * 0.05
    high = math.floor(round(gigabytes / 0.05, 6)) * 0.05
    return round(min(max(0.35, low), high), 2)
