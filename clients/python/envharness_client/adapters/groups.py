"""GRPO group joins for the adapters: a dataset row's group id names a series, so later epochs get fresh groups.

A trainer sees a row (and its ``group_id``) once per epoch, G times (one per generation). The first G joins of
``id`` form group ``id``; once it is full or finished, joins go to ``id~1``, then ``id~2``, ... Every process
follows the same rule, so generations spread over processes still meet in one group.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple
from urllib.parse import quote

from ..errors import StoreConflictError

JSON = Dict[str, Any]
_MAX_GENERATIONS = 10_000
# Per process: the generation a series was last joined at (skips the full ones on later epochs).
_last: Dict[str, int] = {}


def generation_id(series: str, n: int) -> str:
    return series if n == 0 else f"{series}~{n}"


def join_series(client: Any, series: str, body: JSON) -> Tuple[JSON, str]:
    """Joins the first open generation of ``series`` with the sync ``Client``; returns ``(created, group id)``."""
    n = _last.get(series, 0)
    while n < _MAX_GENERATIONS:
        gid = generation_id(series, n)
        try:
            created = client.request("POST", f"/v1/groups/{quote(gid, safe='')}/episodes", body)
            _last[series] = n
            return created, gid
        except StoreConflictError:
            n += 1
    raise StoreConflictError(f"group series {series!r} has {_MAX_GENERATIONS} full generations", code="STORE_CONFLICT", status=409)


async def join_series_async(client: Any, series: str, body: JSON) -> Tuple[JSON, str]:
    """``join_series`` with the ``AsyncClient``."""
    n = _last.get(series, 0)
    while n < _MAX_GENERATIONS:
        gid = generation_id(series, n)
        try:
            created = await client.request("POST", f"/v1/groups/{quote(gid, safe='')}/episodes", body)
            _last[series] = n
            return created, gid
        except StoreConflictError:
            n += 1
    raise StoreConflictError(f"group series {series!r} has {_MAX_GENERATIONS} full generations", code="STORE_CONFLICT", status=409)
