"""kopf's 05-handlers: resume, create, update (old/new/diff), delete and field handlers."""
from typing import Any

from samplecontroller.client.unstructured import unstructured
from samplecontroller.runtime.handled import CREATE, DELETE, RESUME, UPDATE, Change, add_handler
from samplecontroller.runtime.manager import Manager

KEX = unstructured("kopf.dev/v1", "KopfExample")


def resume_fn_1(body: Any, change: Change) -> None:
    print('RESUMED 1st')


def create_fn_1(body: Any, change: Change) -> None:
    print('CREATED 1st')


def resume_fn_2(body: Any, change: Change) -> None:
    print('RESUMED 2nd')


def create_fn_2(body: Any, change: Change) -> None:
    print('CREATED 2nd')


def update_fn(body: Any, change: Change) -> None:
    print('UPDATED', change.diff)  # also change.old and change.new


def delete_fn_1(body: Any, change: Change) -> None:
    print('DELETED 1st')


def delete_fn_2(body: Any, change: Change) -> None:
    print('DELETED 2nd')


def field_fn(body: Any, change: Change) -> None:
    print(f'FIELD CHANGED: {change.old} -> {change.new}')


def setup(mgr: Manager) -> None:
    for fn, on in ((resume_fn_1, RESUME), (create_fn_1, CREATE), (resume_fn_2, RESUME), (create_fn_2, CREATE),
                   (update_fn, UPDATE), (delete_fn_1, DELETE), (delete_fn_2, DELETE)):
        add_handler(mgr, KEX, fn, on=on, finalizer=f"kopf.dev/{fn.__name__}" if on == DELETE else None)
    add_handler(mgr, KEX, field_fn, on=(CREATE, UPDATE), field="spec.field")
