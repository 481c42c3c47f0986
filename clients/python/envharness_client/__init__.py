"""EnvHarness Python client: the HTTP API v1 with a Gymnasium-style ``reset``/``step`` (standard library only)."""

from .client import Client, Env, finish, message, tool
from .errors import (
    BadRequestError,
    CapacityReachedError,
    OpenEnvError,
    WebSocketClosedError,
    ConflictError,
    DomainNotFoundError,
    EnvHarnessError,
    EpisodeBusyError,
    EpisodeFinishedError,
    EpisodeNotFoundError,
    ForbiddenError,
    IdempotencyConflictError,
    InvalidParamsError,
    NotFoundError,
    PayloadTooLargeError,
    PoolEmptyError,
    RunNotFoundError,
    ServerError,
    SnapshotMismatchError,
    ReplayDivergedError,
    SnapshotNotFoundError,
    StoreConflictError,
    StoreFailedError,
    TaskNotFoundError,
    TemplateNotFoundError,
    TransportError,
    UnauthorizedError,
    error_from_problem,
)

from .aio import AsyncClient, AsyncEnv
from .openenv import OpenEnvSession, StepResult

__version__ = "0.2.0"

__all__ = [
    "Client", "Env", "tool", "message", "finish", "error_from_problem",
    "EnvHarnessError", "TransportError", "BadRequestError", "InvalidParamsError", "IdempotencyConflictError",
    "UnauthorizedError", "ForbiddenError", "NotFoundError", "EpisodeNotFoundError", "TaskNotFoundError",
    "TemplateNotFoundError", "DomainNotFoundError", "RunNotFoundError", "SnapshotNotFoundError", "ConflictError",
    "EpisodeFinishedError", "EpisodeBusyError", "StoreConflictError", "PoolEmptyError", "SnapshotMismatchError", "ReplayDivergedError",
    "PayloadTooLargeError", "ServerError", "StoreFailedError",
    "AsyncClient", "AsyncEnv", "OpenEnvSession", "StepResult", "OpenEnvError", "CapacityReachedError", "WebSocketClosedError",
]
