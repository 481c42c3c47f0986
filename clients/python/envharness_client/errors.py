"""Typed exceptions mapped from the server's application/problem+json answers (``code`` -> class)."""

from __future__ import annotations

from typing import Any, Dict, Optional


class EnvHarnessError(Exception):
    """Base class: the server answered with a problem, or could not be reached.

    Attributes: ``code`` (EnvHarness error code, e.g. ``EPISODE_BUSY``), ``status`` (HTTP status),
    ``detail`` (what happened and how to fix it), ``pointer`` (JSON pointer of the offending field in
    the request body, when a field is at fault) and ``problem`` (the whole problem document).
    """

    def __init__(self, detail: str, code: str = "", status: int = 0, pointer: Optional[str] = None,
                 problem: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(f"{code}: {detail}" if code else detail)
        self.detail = detail
        self.code = code
        self.status = status
        self.pointer = pointer
        self.problem = problem or {}


class TransportError(EnvHarnessError):
    """The server could not be reached, or the connection broke and the request could not be retried safely."""


class BadRequestError(EnvHarnessError):
    """400/422: the request is malformed or a field is invalid (see ``pointer``)."""


class InvalidParamsError(BadRequestError):
    """PARAMS_INVALID, CONFIG_INVALID, TASK_INVALID, IMPORT_INVALID."""


class IdempotencyConflictError(BadRequestError):
    """IDEMPOTENCY_CONFLICT: an Idempotency-Key was reused with a different body."""


class UnauthorizedError(EnvHarnessError):
    """401: missing or wrong bearer token."""


class ForbiddenError(EnvHarnessError):
    """403: Host or Origin not allowed."""


class NotFoundError(EnvHarnessError):
    """404: no such resource (for episodes: or not yours; the server does not say which)."""


class EpisodeNotFoundError(NotFoundError):
    """EPISODE_NOT_FOUND: unknown episode, foreign token, closed or reaped episode, or step before reset."""


class TaskNotFoundError(NotFoundError):
    """TASK_NOT_FOUND."""


class TemplateNotFoundError(NotFoundError):
    """TEMPLATE_NOT_FOUND or VERSION_NOT_FOUND."""


class DomainNotFoundError(NotFoundError):
    """DOMAIN_NOT_FOUND."""


class RunNotFoundError(NotFoundError):
    """RUN_NOT_FOUND."""


class SnapshotNotFoundError(NotFoundError):
    """SNAPSHOT_NOT_FOUND."""


class ConflictError(EnvHarnessError):
    """409: the request conflicts with the current state."""


class EpisodeFinishedError(ConflictError):
    """EPISODE_FINISHED: a step after the episode terminated or was truncated; reset first."""


class EpisodeBusyError(ConflictError):
    """EPISODE_BUSY: another request of the same episode is being applied."""


class StoreConflictError(ConflictError):
    """STORE_CONFLICT: e.g. ``expectedStep`` does not match (the step was already applied)."""


class PoolEmptyError(ConflictError):
    """POOL_EMPTY: nothing to sample; generate tasks first."""


class SnapshotMismatchError(ConflictError):
    """SNAPSHOT_MISMATCH: the snapshot does not fit this store or template set."""


class ReplayDivergedError(ConflictError):
    """REPLAY_DIVERGED: an episode recorded as its inputs no longer replays as recorded (the domain changed)."""


class PayloadTooLargeError(EnvHarnessError):
    """413: the body is larger than the server's limit."""


class ServerError(EnvHarnessError):
    """5xx: the server failed (STORE_FAILED, UPSTREAM_FAILED, INTERNAL)."""


class StoreFailedError(ServerError):
    """STORE_FAILED: the store could not write; the step was not acknowledged."""


_BY_CODE = {
    "PARAMS_INVALID": InvalidParamsError,
    "CONFIG_INVALID": InvalidParamsError,
    "TASK_INVALID": InvalidParamsError,
    "IMPORT_INVALID": InvalidParamsError,
    "IDEMPOTENCY_CONFLICT": IdempotencyConflictError,
    "UNAUTHORIZED": UnauthorizedError,
    "FORBIDDEN": ForbiddenError,
    "EPISODE_NOT_FOUND": EpisodeNotFoundError,
    "TASK_NOT_FOUND": TaskNotFoundError,
    "TEMPLATE_NOT_FOUND": TemplateNotFoundError,
    "VERSION_NOT_FOUND": TemplateNotFoundError,
    "DOMAIN_NOT_FOUND": DomainNotFoundError,
    "RUN_NOT_FOUND": RunNotFoundError,
    "SNAPSHOT_NOT_FOUND": SnapshotNotFoundError,
    "EPISODE_FINISHED": EpisodeFinishedError,
    "EPISODE_BUSY": EpisodeBusyError,
    "STORE_CONFLICT": StoreConflictError,
    "POOL_EMPTY": PoolEmptyError,
    "SNAPSHOT_MISMATCH": SnapshotMismatchError,
    "REPLAY_DIVERGED": ReplayDivergedError,
    "PAYLOAD_TOO_LARGE": PayloadTooLargeError,
    "STORE_FAILED": StoreFailedError,
}

_BY_STATUS = {400: BadRequestError, 401: UnauthorizedError, 403: ForbiddenError, 404: NotFoundError,
              409: ConflictError, 413: PayloadTooLargeError, 415: BadRequestError, 422: BadRequestError}


def error_from_problem(status: int, problem: Dict[str, Any]) -> EnvHarnessError:
    """The exception for a problem document (by ``code``, else by HTTP status)."""
    code = str(problem.get("code", ""))
    detail = str(problem.get("detail") or problem.get("title") or f"HTTP {status}")
    cls = _BY_CODE.get(code)
    if cls is None:
        cls = ServerError if status >= 500 else _BY_STATUS.get(status, EnvHarnessError)
    pointer = problem.get("pointer")
    return cls(detail, code=code, status=int(problem.get("status", status)), pointer=pointer if isinstance(pointer, str) else None,
               problem=problem)


class OpenEnvError(EnvHarnessError):
    """An OpenEnv WebSocket ``error`` message: ``code`` is OpenEnv's WSErrorCode (VALIDATION_ERROR, EXECUTION_ERROR, ...).

    ``data`` is the whole error payload; ``problem`` the EnvHarness problem inside it, when there is one.
    """

    def __init__(self, detail: str, code: str = "", data: Optional[Dict[str, Any]] = None) -> None:
        data = data or {}
        problem = data.get("problem") if isinstance(data.get("problem"), dict) else None
        pointer = problem.get("pointer") if problem else None
        super().__init__(detail, code=code, status=int(problem.get("status", 0)) if problem else 0,
                         pointer=pointer if isinstance(pointer, str) else None, problem=problem)
        self.data = data


class CapacityReachedError(OpenEnvError):
    """CAPACITY_REACHED: the server already holds ``max_concurrent_envs`` OpenEnv sessions (``active_sessions``, ``max_sessions``)."""


class WebSocketClosedError(TransportError):
    """The WebSocket connection closed (``close_code``, ``reason``)."""

    def __init__(self, detail: str, close_code: int = 1006, reason: str = "") -> None:
        super().__init__(detail)
        self.close_code = close_code
        self.reason = reason
