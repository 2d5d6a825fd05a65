"""What an instance with internet access must not reach (runtime/internet.py): the host's own
and broadcast addresses read from /proc/net/fib_trie, and a namespace network that overlaps
none of the host's networks."""

from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from deployer.emulator.runtime.internet import (
    ALWAYS_BLOCKED,
    CIDR_CANDIDATES,
    host_local_prefixes,
    namespace_network,
)

FIB_TRIE = """Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     +-- 192.0.2.0/24 2 0 2
        +-- 192.0.2.0/30 2 0 2
           |-- 192.0.2.0
              /24 link UNICAST
           |-- 192.0.2.2
              /32 host LOCAL
        |-- 192.0.2.255
           /32 link BROADCAST
     |-- 10.1.0.0
        /16 host LOCAL
Local:
  +-- 0.0.0.0/0 3 0 5
     +-- 192.0.2.0/24 2 0 2
           |-- 192.0.2.2
              /32 host LOCAL
"""

ROUTES = """Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
vbox\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
"""


def test_the_hosts_own_and_broadcast_addresses_are_read_loopback_left_out() -> None:
    # an AnyIP range (local 10.1.0.0/16) counts as the host's own
    assert host_local_prefixes(FIB_TRIE) == [
        "192.0.2.2/32", "192.0.2.255/32", "10.1.0.0/16"]


def test_the_namespace_network_avoids_every_network_of_the_host() -> None:
    # 10.0.2.0/24 is routed on this host (a VirtualBox NAT network): the next block is taken
    chosen = namespace_network(host_local_prefixes(FIB_TRIE), ROUTES)
    assert chosen == CIDR_CANDIDATES[1]
    assert namespace_network([], "") == CIDR_CANDIDATES[0]


leaf = st.tuples(st.ip_addresses(v=4), st.integers(0, 32),
                 st.sampled_from(["LOCAL", "BROADCAST", "UNICAST", "MULTICAST"]),
                 st.sampled_from(["host", "link", "universe"]))


def _render(leaves: list[tuple[ipaddress.IPv4Address, int, str, str]]) -> str:
    lines = ["Local:", "  +-- 0.0.0.0/0 3 0 5"]
    for address, length, kind, scope in leaves:
        lines += [f"     |-- {address}", f"        /{length} {scope} {kind}"]
    return "\n".join(lines) + "\n"


@given(st.lists(leaf, max_size=20))
def test_every_local_or_broadcast_entry_and_nothing_else_is_blocked(leaves) -> None:
    expected: dict[str, None] = {}
    for address, length, kind, _scope in leaves:
        network = ipaddress.IPv4Network(f"{address}/{length}", strict=False)
        if kind in ("LOCAL", "BROADCAST") and not network.is_loopback:
            expected[str(network)] = None
    assert host_local_prefixes(_render(leaves)) == list(expected)


networks_v4 = st.one_of(
    st.builds(lambda address, length: ipaddress.IPv4Network(f"{address}/{length}", strict=False),
              st.ip_addresses(v=4), st.integers(8, 32)),
    # the candidates themselves, their neighbourhoods and hosts inside them
    st.builds(lambda candidate, length, offset: ipaddress.IPv4Network(
        f"{ipaddress.IPv4Network(candidate)[offset]}/{length}", strict=False),
        st.sampled_from(CIDR_CANDIDATES), st.integers(8, 32), st.integers(0, 255)))


@given(st.lists(networks_v4, max_size=6))
def test_the_chosen_namespace_network_overlaps_no_host_network_when_one_is_free(networks) -> None:
    local = [str(n) for n in networks]
    chosen = ipaddress.IPv4Network(namespace_network(local, ""))
    free = [c for c in CIDR_CANDIDATES
            if not any(ipaddress.IPv4Network(c).overlaps(n) for n in networks)]
    if free:
        assert str(chosen) == free[0]
    else:
        assert str(chosen) == CIDR_CANDIDATES[0]


def test_multicast_and_the_limited_broadcast_are_always_blocked() -> None:
    assert set(ALWAYS_BLOCKED) == {"224.0.0.0/4", "255.255.255.255/32"}
