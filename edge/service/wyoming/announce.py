"""The zeroconf (mDNS) announcement Home Assistant discovers Wyoming services by:
``_wyoming._tcp.local.`` with this box's LAN address and the server's port (``wyoming.zeroconf``)."""
from __future__ import annotations

import ipaddress
import socket

from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

SERVICE_TYPE = "_wyoming._tcp.local."
MDNS_GROUP = "224.0.0.251"  # the mDNS multicast group: the route to it names the LAN interface


def lan_address(host: str) -> str:
    """The IPv4 address to announce: ``host`` itself, or for a wildcard bind (``0.0.0.0``, ``::``)
    the address of the interface mDNS leaves from.

    Raises:
        OSError: no interface routes to the mDNS group (no LAN); the message names wyoming.zeroconf.
        ValueError: ``host`` is a name or an IPv6 address.
    """
    if host not in ("", "0.0.0.0", "::"):
        try:
            return str(ipaddress.IPv4Address(host))
        except ValueError:
            raise ValueError(f"wyoming.zeroconf: {host!r} in wyoming.uri is not an IPv4 address; listen on "
                             f"tcp://0.0.0.0:PORT or on the box's IPv4 address to announce it") from None
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sk:
            sk.connect((MDNS_GROUP, 5353))  # UDP: nothing is sent, only the route is looked up
            return sk.getsockname()[0]
    except OSError as e:
        raise OSError(e.errno, f"wyoming.zeroconf: no LAN interface to announce on ({e.strerror or e}); "
                      f"set wyoming.zeroconf: false or connect the box to the network") from None


class Announcement:
    """``name._wyoming._tcp.local.`` at ``address``:``port`` while open: :meth:`start`, :meth:`close`."""

    def __init__(self, port: int, address: str, name: str | None = None):
        self.port = port
        self.address = address
        self.name = name or f"edge-{socket.gethostname()}"
        self.info = AsyncServiceInfo(SERVICE_TYPE, f"{self.name}.{SERVICE_TYPE}",
                                     addresses=[socket.inet_aton(address)], port=port)
        self._zc: AsyncZeroconf | None = None

    async def start(self) -> None:
        """Register the service (answers mDNS queries until :meth:`close`)."""
        self._zc = AsyncZeroconf()
        await self._zc.async_register_service(self.info)

    async def close(self) -> None:
        """Withdraw the announcement and stop answering."""
        if self._zc is not None:
            zc, self._zc = self._zc, None
            await zc.async_unregister_service(self.info)
            await zc.async_close()
