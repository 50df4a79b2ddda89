"""The file-metadata calls (HMS's cache of file footers): there is no file-metadata store here,
so reads answer "not supported" and writes are accepted and kept nowhere, as HMS answers them
without one. See ``docs/hms-api.md#smaller-calls``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class FileMetadataCalls(Area):
    """File metadata. Raises nothing: every call is answered."""

    @thrift(rule=auth.API)
    def get_file_metadata_by_expr(
        self, req: hms.GetFileMetadataByExprRequest
    ) -> hms.GetFileMetadataByExprResult:
        """No metadata; not supported."""
        return hms.GetFileMetadataByExprResult(metadata={}, isSupported=False)

    @thrift(rule=auth.API)
    def get_file_metadata(self, req: hms.GetFileMetadataRequest) -> hms.GetFileMetadataResult:
        """No metadata; not supported."""
        return hms.GetFileMetadataResult(metadata={}, isSupported=False)

    @thrift(rule=auth.API)
    def put_file_metadata(self, req: hms.PutFileMetadataRequest) -> hms.PutFileMetadataResult:
        """Accepted, kept nowhere."""
        return hms.PutFileMetadataResult()

    @thrift(rule=auth.API)
    def clear_file_metadata(
        self, req: hms.ClearFileMetadataRequest
    ) -> hms.ClearFileMetadataResult:
        """Accepted: there is nothing to clear."""
        return hms.ClearFileMetadataResult()

    @thrift(
        rule=auth.on_tables(
            "CACHE_METADATA",
            (auth.SELECT, auth.INSERT),
            auth.named_fields("req", "dbName", "tblName"),
        ),
    )
    def cache_file_metadata(
        self, req: hms.CacheFileMetadataRequest
    ) -> hms.CacheFileMetadataResult:
        """Not supported."""
        return hms.CacheFileMetadataResult(isSupported=False)
