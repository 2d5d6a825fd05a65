"""The regions CloudFlow is offered in (DescribeRegions), as the endpoint docs list them.

Source: "Endpoints" of the CloudFlow API (help.aliyun.com/en/document_detail/2590630.html):
ap-southeast-1, cn-beijing, cn-hangzhou, cn-qingdao, cn-shanghai, cn-shenzhen, us-west-1,
public endpoint ``<region>.fnf.aliyuncs.com``. ``LocalName`` follows ``AcceptLanguage``
(``zh-CN``, the default, or ``en-US``; DescribeRegions docs, whose sample shows
``cn-qingdao`` / ``cn-qingdao.fnf.aliyuncs.com`` / ``华北1(青岛)``).
"""

from __future__ import annotations

from dataclasses import dataclass

from deployer.emulator.services.errors import InvalidValue

__all__ = ["LANGUAGES", "Region", "cloudflow_regions"]

LANGUAGES = ("zh-CN", "en-US")

# region id -> (zh-CN name, en-US name)
_REGIONS = {
    "cn-qingdao": ("华北1(青岛)", "China (Qingdao)"),
    "cn-beijing": ("华北2(北京)", "China (Beijing)"),
    "cn-hangzhou": ("华东1(杭州)", "China (Hangzhou)"),
    "cn-shanghai": ("华东2(上海)", "China (Shanghai)"),
    "cn-shenzhen": ("华南1(深圳)", "China (Shenzhen)"),
    "ap-southeast-1": ("新加坡", "Singapore"),
    "us-west-1": ("美国(硅谷)", "US (Silicon Valley)"),
}


@dataclass(frozen=True, slots=True)
class Region:
    region_id: str
    endpoint: str
    local_name: str


def cloudflow_regions(accept_language: str = "") -> list[Region]:
    """Every CloudFlow region, named in ``accept_language`` (default ``zh-CN``)."""
    language = accept_language or "zh-CN"
    if language not in LANGUAGES:
        raise InvalidValue(f"AcceptLanguage '{accept_language}' is invalid: use zh-CN or "
                           "en-US", field="AcceptLanguage")
    index = LANGUAGES.index(language)
    return [Region(rid, f"{rid}.fnf.aliyuncs.com", names[index])
            for rid, names in _REGIONS.items()]
