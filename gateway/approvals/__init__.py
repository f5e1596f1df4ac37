"""Durable approvals: a person decides whether a tool call runs (the ``approval`` handler type).

The state machine lives in the state store (``gateway.store.base.Store``, the ``approval_*`` methods)::

                       approve (channel button, CLI, console, webhook callback)
                  +------------------------------------------------------------> approved
                  |    reject
    (new) --> pending ---------------------------------------------------------> rejected
                  |    expires_at passed (the waiting handler, or the sweeper)
                  +------------------------------------------------------------> expired
                  |    the channel could not post the request
                  +------------------------------------------------------------> cancelled

Each transition happens once (an atomic ``UPDATE ... WHERE status = 'pending'``) and records who and
when; an answer to a request that is no longer pending is refused and says why. An approved or
rejected request is *consumed* once by the tool call it was for (``consumed_at``): a retried call
finds the answer given while no process was waiting, and the call after that asks again.

Modules: ``record`` (the request row, its keys), ``desk`` (create, find, wait, decide, sweep; the one
place transitions happen), ``wake`` (waiting without polling: one FIFO per waiter), ``config`` (the
``channels:`` section), ``channels/`` (slack, feishu, webhook on one small base; SDKs imported only
when a channel of that type is used).
"""
