"""``python -m metastore_server``: the same as the ``metastore-server`` console script."""

from metastore_server.cli.launch import main

if __name__ == "__main__":
    raise SystemExit(main())
