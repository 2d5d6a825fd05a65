"""RAM policy evaluation: wildcards, Allow / explicit Deny, NotAction/NotResource, conditions,
session policies; trust policies."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from deployer.emulator.services.authorization import evaluate_policies, pattern_matches
from deployer.emulator.services.errors import Decision
from deployer.emulator.services.roles import SYSTEM_POLICIES, trust_allows

FN = "acs:fc:cn-hangzhou:123:functions/StartJob"


def _doc(*statements: dict) -> dict:
    return {"Version": "1", "Statement": list(statements)}


def _allow(action, resource="*", **extra) -> dict:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def _deny(action, resource="*", **extra) -> dict:
    return {"Effect": "Deny", "Action": action, "Resource": resource, **extra}


def test_allow_deny_and_implicit_deny():
    assert evaluate_policies([], "fc:InvokeFunction", FN) is Decision.IMPLICIT_DENY
    assert evaluate_policies([_doc(_allow("fc:InvokeFunction"))], "fc:InvokeFunction", FN) \
        is Decision.ALLOW
    assert evaluate_policies([_doc(_allow("fc:*")), _doc(_deny("fc:Invoke*", FN))],
                    "fc:InvokeFunction", FN) is Decision.EXPLICIT_DENY
    assert evaluate_policies([_doc(_allow("fc:*", "acs:fc:*:*:functions/Other"))],
                    "fc:InvokeFunction", FN) is Decision.IMPLICIT_DENY
    assert evaluate_policies([_doc(_allow("FC:invokefunction"))], "fc:InvokeFunction", FN) \
        is Decision.ALLOW  # actions ignore case
    assert evaluate_policies([_doc(_allow("fc:InvokeFunction", FN.lower()))],
                             "fc:InvokeFunction", FN) \
        is Decision.IMPLICIT_DENY  # resources do not


def test_not_action_not_resource_and_conditions():
    everything_but_delete = {"Effect": "Allow", "NotAction": "fc:Delete*", "Resource": "*"}
    assert evaluate_policies([_doc(everything_but_delete)], "fc:GetFunction", FN) is Decision.ALLOW
    assert evaluate_policies([_doc(everything_but_delete)], "fc:DeleteFunction", FN) \
        is Decision.IMPLICIT_DENY
    outside = {"Effect": "Deny", "Action": "*", "NotResource": "acs:fc:*:*:functions/Start*"}
    assert evaluate_policies([_doc(_allow("*"), outside)], "fc:GetFunction", FN) is Decision.ALLOW
    passrole = SYSTEM_POLICIES["AliyunFnFFullAccess"][1]
    role = "acs:ram::123:role/r"
    assert evaluate_policies([json.loads(passrole)], "ram:PassRole", role,
                    {"acs:Service": "fnf.aliyuncs.com"}) is Decision.ALLOW
    assert evaluate_policies([json.loads(passrole)], "ram:PassRole", role,
                    {"acs:Service": "fc.aliyuncs.com"}) is Decision.IMPLICIT_DENY
    assert evaluate_policies([json.loads(passrole)], "ram:PassRole", role) is Decision.IMPLICIT_DENY


def test_documented_system_policies_grant_their_actions():
    invocation = json.loads(SYSTEM_POLICIES["AliyunFCInvocationAccess"][1])
    assert evaluate_policies([invocation], "fc:InvokeFunction", FN) is Decision.ALLOW
    assert evaluate_policies([invocation], "fc:DeleteFunction", FN) is Decision.IMPLICIT_DENY
    fnf = json.loads(SYSTEM_POLICIES["AliyunFnFFullAccess"][1])
    assert evaluate_policies([fnf], "fnf:ReportTaskSucceeded", "acs:fnf:cn-hangzhou:123:flow/*") \
        is Decision.ALLOW


def test_trust_policies():
    trust = json.dumps(_doc({"Effect": "Allow", "Action": "sts:AssumeRole",
                             "Principal": {"Service": ["fc.aliyuncs.com"]}}))
    assert trust_allows(trust, service="fc.aliyuncs.com")
    assert not trust_allows(trust, service="fnf.aliyuncs.com")
    both = json.dumps(_doc(
        {"Effect": "Allow", "Action": "sts:AssumeRole",
         "Principal": {"RAM": "acs:ram::123:root"}},
        {"Effect": "Deny", "Action": "sts:AssumeRole",
         "Principal": {"RAM": ["acs:ram::123:role/blocked"]}}))
    assert trust_allows(both, ram_principals=("acs:ram::123:root", "acs:ram::123:role/other"))
    assert not trust_allows(both, ram_principals=("acs:ram::123:root",
                                                  "acs:ram::123:role/blocked"))
    assert not trust_allows("not json", service="fc.aliyuncs.com")


_text = st.text(alphabet="ab:/*?-", max_size=12)


@given(_text, st.text(alphabet="ab:/-", max_size=12))
def test_pattern_matching_agrees_with_a_regex_translation(pattern, value):
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    assert pattern_matches(pattern, value) == (re.fullmatch(regex, value, re.S) is not None)


@given(st.text(alphabet="ab:/-", max_size=12))
def test_a_literal_pattern_matches_only_itself(value):
    assert pattern_matches(value, value)
    assert pattern_matches("*", value)
    assert not pattern_matches(value + "x", value)
