"""Read your own writes (issue 26, KEP-5647): the runtime client records what a reconcile wrote
(``recorder``) and the controller does not reconcile that key again until its cache has observed
those writes (``tracker``). See ``tracker``'s docstring for the exact contract.

On by default: ``runtime.manager.Options(read_your_writes=ReadYourWrites(enabled=False))`` turns
it off for every controller of a manager, ``runtime.controller.Options(read_your_writes=...)``
for one controller.
"""

from __future__ import annotations

from samplecontroller.runtime.consistency.recorder import Recording, Write, recording
from samplecontroller.runtime.consistency.tracker import DEFAULT_TIMEOUT, ObservedWrites, ReadYourWrites

__all__ = ["DEFAULT_TIMEOUT", "ObservedWrites", "ReadYourWrites", "Recording", "Write", "recording"]
