"""Where the engine listens: the one definition of each address Draftwise uses."""

from __future__ import annotations

LOOPBACK = "127.0.0.1"  # this computer only (the default, and where Draftwise talks to it)
ALL_INTERFACES = "0.0.0.0"  # noqa: S104 - only when the user opens the engine to the network
DEFAULT_PORT = 8080  # llama-server's own default, so tools set up for it keep working
RPC_PORT = 50052  # ggml-rpc-server's own default (tools/rpc/rpc-server.cpp): an RPC worker
