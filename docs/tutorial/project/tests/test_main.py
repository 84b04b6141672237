"""The operator's main program: flags and the wiring of every controller into a
Manager."""

from __future__ import annotations

import pytest
from samplecontroller.runtime import cmd
from samplecontroller.runtime.manager import Manager
from samplecontroller.testing import FakeResourceClient

from memcachedop import controllers
from memcachedop.__main__ import NAME, main
from memcachedop.generated.clientset.fake import Clientset
from memcachedop.scheme import SCHEME


def test_a_bad_flag_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--workers", "0"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--workers" in err


def test_every_controller_registers_with_a_manager() -> None:
    fake = Clientset()
    mgr = Manager(
        None,
        scheme=SCHEME,
        client_for=lambda info, ns: FakeResourceClient(fake, info, ns),
    )
    controllers.setup(mgr, cmd.parse_flags([], name=NAME))
