"""Paged lists, like client-go's tools/pager.

``list_all(list_func, options, page_size)`` follows ``continue`` tokens until the list is complete.

Contracts (Go's ListPager with FullListIfExpired):
- The first request carries ``limit=page_size`` (0 = unpaged) and the caller's resourceVersion;
  later pages carry only ``continue`` (resourceVersion cleared, as the server requires).
- If a continuation page fails with 410 Expired, the whole list is fetched again unpaged at the
  originally requested resourceVersion. An error on the first page propagates.
- Returns the items, the resourceVersion of the first page (the list's snapshot) and whether
  the result came in more than one page.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from samplecontroller.apimachinery import errors
from samplecontroller.client.types import ListOptions, ListResult

DEFAULT_PAGE_SIZE = 500

ListFunc = Callable[[ListOptions], ListResult[Any]]


def list_all(list_func: ListFunc, options: ListOptions, page_size: int = DEFAULT_PAGE_SIZE,
             each: Callable[[Any], Any] | None = None) -> tuple[list[Any], str, bool]:
    """``(items, resource_version, paginated)``; see the module docstring. ``each`` maps every item
    as its page arrives (before the next page is requested)."""
    opts = dataclasses.replace(options)
    if not opts.limit:
        opts.limit = page_size or None
    requested_rv = options.resource_version
    requested_match = options.resource_version_match
    items: list[Any] = []
    list_rv = ""
    paginated = False
    first = True
    while True:
        try:
            page = list_func(opts)
        except errors.StatusError as err:
            if not errors.is_resource_expired(err) or not opts.continue_:
                raise
            full = dataclasses.replace(options, limit=None, continue_=None, resource_version=requested_rv,
                                       resource_version_match=requested_match)
            page = list_func(full)
            return _items(page.items, each), page.resource_version, paginated
        if first:
            list_rv = page.resource_version
            first = False
        items.extend(_items(page.items, each))
        if not page.continue_:
            return items, list_rv, paginated
        opts = dataclasses.replace(opts, continue_=page.continue_, resource_version=None,
                                   resource_version_match=None)
        paginated = True


def _items(page_items: Any, each: Callable[[Any], Any] | None) -> list[Any]:
    return list(page_items) if each is None else [each(obj) for obj in page_items]
