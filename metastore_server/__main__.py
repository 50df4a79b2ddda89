"""``python -m metastore_server``: the same as the ``metastore-server`` console script. The
processes ``serve`` starts (workers, the REST catalog's) run this way: they take the stop
signals before anything else (``stop_signals.py``)."""

import sys

from metastore_server import stop_signals

if __name__ == "__main__":
    try:
        if stop_signals.started_by_serve(sys.argv[1:]):
            stop_signals.take_at_start()  # a signal pending since its start is taken here
        from metastore_server.cli.main import main

        code = main()
    except stop_signals.StoppedAtStart:  # before serve took over: nothing to close
        stop_signals.ignore()
        code = 0
    raise SystemExit(code)
