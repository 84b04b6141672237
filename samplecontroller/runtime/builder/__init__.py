"""A fluent builder for controllers (pkg/builder).

    controller_managed_by(mgr).for_(Foo).owns(Deployment).complete(FooReconciler(...))

- ``for_(T, *predicates)``: reconcile T; its events enqueue the object itself.
- ``owns(T, *predicates)``: events of T enqueue its controlling owner of the ``for_`` type.
- ``watches(T or source, handler, *predicates)``: any type (from the cache) or a ready source.
- ``only_metadata=True`` on ``for_``/``owns``/``watches`` (controller-runtime's ``builder.OnlyMetadata``):
  that kind is watched through a metadata-only informer (``client.metadata.only_metadata(T)`` in
  the cache, holding ``PartialObjectMetadata``), for kinds watched cluster-wide whose metadata is
  all the controller reads (Secrets, Pods). Its handlers get ``PartialObjectMetadata`` objects;
  read them from the cache with ``only_metadata(T)``.
- ``with_event_filter(p)``: a predicate applied to every for_/owns/watches(T) event.
- ``with_options(controller.Options)``, ``named(name)``.
- Each reconcile's ``reconcile.context.current()`` has the retry count and a logger that posts
  Events (through the manager's recorder for this controller) about the ``for_`` object.
- Read your own writes (``runtime.consistency``): on unless ``controller.Options.read_your_writes``
  or, when that is None, the manager's ``Options.read_your_writes`` turns it off.
- On a sharded manager (``Options.shard_ring``) the ``for_`` kind and the ``owns`` kinds are
  partitioned (their informers select this replica's objects) and the reconciler is wrapped
  (``runtime.sharding.shard.ShardedReconciler``: drains); a controller without ``for_`` is not
  partitioned and sees every object on every replica. ``for_``/``owns`` with ``only_metadata`` or
  unstructured kinds are refused there (ValueError).
- ``complete(reconciler)`` builds the controller and adds it to the manager (``build`` also
  returns it). ValueError when nothing is watched, when no name can be derived (no ``for_`` and no
  ``named``), when ``for_`` is called twice or when the name is already used in this manager.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from samplecontroller.client.metadata import OnlyMetadata
from samplecontroller.client.unstructured import Unstructured
from samplecontroller.runtime.consistency import ReadYourWrites
from samplecontroller.runtime.controller import Controller, Options
from samplecontroller.runtime.handler import EnqueueRequestForObject, EnqueueRequestForOwner, EventHandler
from samplecontroller.runtime.predicate import Predicate
from samplecontroller.runtime.reconcile import AsyncReconciler, Reconciler
from samplecontroller.runtime.reconcile.context import Contexts
from samplecontroller.runtime.source import Kind, Source

_names_by_manager: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
"""The controller names each live manager has (keyed by the manager itself: an ``id`` of a manager
gone is reused by the next one, whose first controller was then refused as a duplicate)."""


class Builder:
    """Builds one controller for a Manager (controller-runtime's ``builder.Builder``); see the module docstring.

    Each method records part of the configuration and returns the builder; nothing is created until
    ``build`` or ``complete``.
    """

    def __init__(self, mgr: Any) -> None:
        self.mgr = mgr
        self._for: tuple[type[Any], tuple[Predicate, ...]] | None = None
        self._owns: list[tuple[type[Any], tuple[Predicate, ...], bool]] = []
        self._watches: list[tuple[type[Any], EventHandler, tuple[Predicate, ...]]] = []
        self._raw: list[Source] = []
        self._filters: list[Predicate] = []
        self._options = Options()
        self._name = ""

    def for_(self, model: type[Any], *predicates: Predicate, only_metadata: bool = False) -> Builder:
        """Reconcile ``model``: its events (those passing ``predicates``) enqueue the object itself. Once only.
        ``only_metadata``: watch its metadata only (see the module docstring)."""
        if self._for is not None:
            raise ValueError("for_ may only be called once; use watches for more types")
        self._for = (_watched(model, only_metadata), predicates)
        return self

    def owns(self, model: type[Any], *predicates: Predicate, only_controller: bool = True,
             only_metadata: bool = False) -> Builder:
        """Watch ``model`` and enqueue the ``for_`` object that controls it (any owner of that type unless
        ``only_controller``); ``only_metadata``: through a metadata-only informer."""
        self._owns.append((_watched(model, only_metadata), predicates, only_controller))
        return self

    def watches(self, target: type[Any] | Source, handler: EventHandler | None = None,
                *predicates: Predicate, only_metadata: bool = False) -> Builder:
        """Watch a type from the cache with ``handler`` (``only_metadata``: its metadata only), or add a
        ready-made source."""
        if isinstance(target, type | Unstructured | OnlyMetadata):
            if handler is None:
                raise ValueError(f"watches({target.__name__}) needs an event handler")
            self._watches.append((_watched(target, only_metadata), handler, predicates))
        else:
            if only_metadata:
                raise ValueError("only_metadata applies to watches of a type, not of a source")
            self._raw.append(target)
        return self

    def watches_raw_source(self, src: Source) -> Builder:
        """Add a ready-made source (its own handler and predicates), as ``watches(source)``."""
        self._raw.append(src)
        return self

    def with_event_filter(self, predicate: Predicate) -> Builder:
        """Apply ``predicate`` to the events of every ``for_``, ``owns`` and ``watches(type)`` source."""
        self._filters.append(predicate)
        return self

    def with_options(self, options: Options) -> Builder:
        """Use these controller options (workers, rate limiter, timeouts)."""
        self._options = options
        return self

    def named(self, name: str) -> Builder:
        """Name the controller (its queue, metrics and logs); default: the ``for_`` type's name, lowercased."""
        self._name = name
        return self

    def _controller_name(self) -> str:
        if self._name:
            return self._name
        if self._for is None:
            raise ValueError("one of for_() or named() must be called")
        model: Any = self._for[0]
        if isinstance(model, OnlyMetadata):
            model = model.model
        return model.kind.lower() if isinstance(model, Unstructured) else model.__name__.lower()

    def build(self, reconciler: Reconciler | AsyncReconciler) -> Controller:
        """Create the controller with its watches and return it, without adding it to the manager.

        Raises ValueError for nothing to watch, ``owns`` without ``for_``, no name, or a name already
        used in this manager.
        """
        if reconciler is None:
            raise ValueError("must provide a non-nil Reconciler")
        if self._for is None and not self._watches and not self._raw:
            raise ValueError("there are no watches configured, controller will never get triggered. "
                             "Use for_(), owns(), watches() or watches_raw_source() to set them up")
        if self._owns and self._for is None:
            raise ValueError("owns() needs for_(): the owner type is the for_ type")
        name = self._controller_name()
        used = _names_by_manager.setdefault(self.mgr, set())
        if name in used:
            raise ValueError(f"controller with name {name!r} already exists; controller names must be unique "
                             "(use named())")
        cache = self.mgr.get_cache()
        shard = getattr(self.mgr, "sharding", None)
        for_preds: tuple[Predicate, ...] = ()
        if self._for is not None:
            for_preds = (*self._for[1], *self._filters)
            if shard is not None:  # runtime.sharding: partition the for_ and owns kinds, wrap the reconciler
                reconciler, for_preds = self._sharded(shard, cache, reconciler, for_preds)
        loop = getattr(self.mgr, "get_event_loop", None)
        ctrl = Controller(name, reconciler, self._options, event_loop=loop() if loop is not None else None)
        ctrl.observe_writes(cache, self._read_your_writes())
        ctrl.contexts = Contexts(name, for_type=self._for[0] if self._for is not None else None, cache=cache,
                                 recorder=self._recorder(name))
        filters = tuple(self._filters)
        inline = self._options.inline_event_handlers
        if self._for is not None:
            model, _preds = self._for
            ctrl.watch(Kind(cache, model, EnqueueRequestForObject(), *for_preds, inline=inline))
            for owned, opreds, only_controller in self._owns:
                owner = model.model if isinstance(model, OnlyMetadata) else model
                h = EnqueueRequestForOwner(owner, only_controller, scheme=self.mgr.get_scheme())
                ctrl.watch(Kind(cache, owned, h, *opreds, *filters, inline=inline))
        for wmodel, handler, wpreds in self._watches:
            ctrl.watch(Kind(cache, wmodel, handler, *wpreds, *filters, inline=inline))
        for src in self._raw:
            ctrl.watch(src)
        used.add(name)
        return ctrl

    def _sharded(self, shard: Any, cache: Any, reconciler: Any,
                 preds: tuple[Predicate, ...]) -> tuple[Any, tuple[Predicate, ...]]:
        from samplecontroller.runtime.reconcile import is_async
        from samplecontroller.runtime.sharding.shard import (
            AsyncShardedReconciler,
            ShardedReconciler,
            drain_or,
        )

        assert self._for is not None
        model = self._for[0]
        shard.partition(cache, model)
        for owned, _opreds, _only in self._owns:
            shard.partition(cache, owned, owner=model)
        if is_async(reconciler):
            wrapped: Any = AsyncShardedReconciler(reconciler, shard, model, self.mgr.get_async_client())
        else:
            wrapped = ShardedReconciler(reconciler, shard, model, self.mgr.get_client())
        return wrapped, drain_or(shard, preds)

    def _read_your_writes(self) -> ReadYourWrites:
        """The controller's read-your-writes options, else the manager's (default: on)."""
        if self._options.read_your_writes is not None:
            return self._options.read_your_writes
        mgr_options = getattr(self.mgr, "options", None)
        found = getattr(mgr_options, "read_your_writes", None)
        return found if isinstance(found, ReadYourWrites) else ReadYourWrites()

    def _recorder(self, name: str) -> Callable[[], Any] | None:
        """The manager's EventRecorder for this controller, made on first use."""
        get = getattr(self.mgr, "get_event_recorder_for", None)
        if get is None:
            return None
        return lambda: get(name)

    def complete(self, reconciler: Reconciler | AsyncReconciler) -> Controller:
        """``build`` the controller and add it to the manager (it starts with the manager); return it."""
        ctrl = self.build(reconciler)
        self.mgr.add(ctrl)
        return ctrl


def controller_managed_by(mgr: Any) -> Builder:
    """A ``Builder`` for a controller run by ``mgr`` (Go's ``ctrl.NewControllerManagedBy``)."""
    return Builder(mgr)


__all__ = ["Builder", "controller_managed_by"]


def _watched(model: Any, only_metadata: bool) -> Any:
    """The cache key a builder watches ``model`` under: ``OnlyMetadata(model)`` for ``only_metadata``."""
    return OnlyMetadata(model) if only_metadata else model
