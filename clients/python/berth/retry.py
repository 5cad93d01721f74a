"""Retries with exponential backoff for calls that are safe to repeat."""

import random
import time
from dataclasses import dataclass
from typing import Callable, Optional, TypeVar

from berth.errors import DeadlineExceeded, Unavailable

__all__ = ["RetryPolicy", "call_with_retries"]

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How idempotent calls are retried when berthd answers UNAVAILABLE
    (unreachable, restarting, "berthd is recovering" while it loads its
    store). DEADLINE_EXCEEDED is not retried: the call already waited its
    whole deadline.

    attempts: calls in all, first included (1 = no retry). The defaults
        wait 0.1, 0.2, 0.4 … capped at 5 s between 8 attempts: about 16 s,
        longer than berthd takes to restart on a store of 100k jobs.
    first_backoff / max_backoff: seconds; each wait doubles (multiplier).
    jitter: each wait is scaled by a random factor in [1 - jitter, 1]."""
    attempts: int = 8
    first_backoff: float = 0.1
    max_backoff: float = 5.0
    multiplier: float = 2.0
    jitter: float = 0.2

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts: must be >= 1, got %r" % (self.attempts,))
        if self.first_backoff < 0 or self.max_backoff < self.first_backoff:
            raise ValueError("RetryPolicy: need 0 <= first_backoff <= max_backoff")
        if not 0 <= self.jitter < 1:
            raise ValueError("RetryPolicy.jitter: must be in [0, 1), got %r" % (self.jitter,))

    def backoff(self, retry: int) -> float:
        """Seconds to wait before retry number `retry` (1 = the first)."""
        base = min(self.first_backoff * self.multiplier ** (retry - 1), self.max_backoff)
        return base * (1 - self.jitter * random.random())


NO_RETRY = RetryPolicy(attempts=1)


def call_with_retries(policy: RetryPolicy, call: Callable[[], T],
                      on_retry: Optional[Callable[[Unavailable, int], None]] = None,
                      sleep: Callable[[float], None] = time.sleep) -> T:
    """call(), again after each Unavailable (not DeadlineExceeded) until
    policy.attempts calls were made; then the last Unavailable is raised.
    on_retry(error, retry) is called before each wait."""
    retry = 0
    while True:
        try:
            return call()
        except DeadlineExceeded:
            raise
        except Unavailable as e:
            retry += 1
            if retry >= policy.attempts:
                raise
            if on_retry is not None:
                on_retry(e, retry)
            sleep(policy.backoff(retry))
