"""Server settings: one dataclass, filled from flags > environment variables > a config file >
defaults."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields

ENV_PREFIX = "METASTORE_"


@dataclass
class ServerConfig:
    """Everything ``metastore-server serve`` needs."""

    host: str = "127.0.0.1"
    port: int = 9083
    storage: str = "sqlite:///./var/metastore.db"
    warehouse: str = "./var/warehouse"
    transport: str = "buffered"  # buffered | framed
    protocol: str = "binary"  # binary | compact
    max_connections: int = 1000
    partition_request_limit: int = -1  # HMS hive.metastore.limit.partition.request
    listing_cache_mb: int = 256  # whole-table listings kept while the store is unchanged
    log_level: str = "info"
    log_format: str = "console"  # console | json
    extra_config: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ServerConfig:
        """Defaults overridden by a TOML file of the same settings (``port = 9183``, ...), at
        top level or under ``[server]``; ``[hive]`` holds extra values for get_config_value.
        ValueError names an unknown or mistyped setting."""
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
        settings = dict(document.get("server", {}))
        settings.update({k: v for k, v in document.items() if k not in ("server", "hive")})
        config = cls()
        known = {f.name: f for f in fields(cls) if f.name != "extra_config"}
        for name, value in settings.items():
            attribute = name.replace("-", "_")
            if attribute not in known:
                raise ValueError(f"{path}: unknown setting {name!r}; known: {sorted(known)}")
            expected = type(getattr(config, attribute))
            if not isinstance(value, expected) or isinstance(value, bool):
                raise ValueError(f"{path}: {name} must be a {expected.__name__}, not {value!r}")
            setattr(config, attribute, value)
        config.extra_config = {str(k): str(v) for k, v in document.get("hive", {}).items()}
        return config

    @classmethod
    def from_env(
        cls, environ: dict[str, str] | None = None, base: ServerConfig | None = None
    ) -> ServerConfig:
        """``base`` (default: the defaults; else a config file's) overridden by
        ``METASTORE_<FIELD>`` environment variables."""
        env = os.environ if environ is None else environ
        config = base if base is not None else cls()
        for name in (
            "host",
            "storage",
            "warehouse",
            "transport",
            "protocol",
            "log_level",
            "log_format",
        ):
            value = env.get(ENV_PREFIX + name.upper())
            if value:
                setattr(config, name, value)
        for name in ("port", "max_connections", "partition_request_limit", "listing_cache_mb"):
            value = env.get(ENV_PREFIX + name.upper())
            if value:
                setattr(config, name, int(value))
        return config

    def validate(self) -> None:
        """Raise ValueError on a setting that cannot work."""
        if self.transport not in ("buffered", "framed"):
            raise ValueError(f"transport must be buffered or framed, not {self.transport!r}")
        if self.protocol not in ("binary", "compact"):
            raise ValueError(f"protocol must be binary or compact, not {self.protocol!r}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port out of range: {self.port}")
        if self.max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        if self.listing_cache_mb < 0:
            raise ValueError("listing_cache_mb must not be negative")
