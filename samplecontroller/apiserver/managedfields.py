"""Server-side apply and ``metadata.managedFields``: ``samplecontroller.apimachinery.fieldmanager``
(one implementation, shared with the fake clients of ``samplecontroller.runtime.client.fake``)."""

from samplecontroller.apimachinery.fieldmanager import (
    ApplyConflict,
    apply,
    conflict_message,
    field_set,
    fields_v1,
    fields_v1_to_paths,
    format_path,
    paths_to_fields_v1,
    update_managed_fields,
)

__all__ = [
    "ApplyConflict",
    "apply",
    "conflict_message",
    "field_set",
    "fields_v1",
    "fields_v1_to_paths",
    "format_path",
    "paths_to_fields_v1",
    "update_managed_fields",
]
