"""SIGTERM as Ctrl-C, and interrupts held while a child is started and recorded (real signals)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from tools._procgroup import Termination, interrupts_deferred, sigterm_as_interrupt


def _signal_self(signum: int) -> None:
    os.kill(os.getpid(), signum)
    for _ in range(1000):  # the handler runs between bytecodes of the main thread
        pass


def _terminated_inside(state: Termination) -> None:
    with sigterm_as_interrupt(state):
        _signal_self(signal.SIGTERM)


def test_sigterm_raises_keyboard_interrupt_inside_and_is_recorded() -> None:
    state = Termination()
    with pytest.raises(KeyboardInterrupt):
        _terminated_inside(state)
    assert state.received is True
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored


def test_an_applications_own_sigterm_handler_is_left_alone() -> None:
    seen: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        with sigterm_as_interrupt(Termination()) as state:
            _signal_self(signal.SIGTERM)
        assert seen == [signal.SIGTERM]
        assert state.received is False
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupted_while_deferred(reached: list[str]) -> None:
    with interrupts_deferred():
        _signal_self(signal.SIGINT)
        reached.append("end of block")  # not cut short by the interrupt


def test_an_interrupt_is_held_until_the_block_ends() -> None:
    reached: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        _interrupted_while_deferred(reached)
    assert reached == ["end of block"]


def test_off_the_main_thread_both_do_nothing() -> None:
    done: list[bool] = []

    def work() -> None:
        with sigterm_as_interrupt() as state, interrupts_deferred():
            done.append(state.received)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert done == [False]
