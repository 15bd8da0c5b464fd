"""Client of the rateguard sidecar: one rate limit per key across a fleet."""

from .client import (
    BatchDecision,
    Client,
    ClientError,
    Decision,
    SidecarUnavailable,
)

__all__ = ["BatchDecision", "Client", "ClientError", "Decision", "SidecarUnavailable"]
__version__ = "0.2.0"
