"""The scheduled query calls of HMS 4: stored and handed out to executors, never run here.
See ``docs/hms-api.md``."""

from __future__ import annotations

from metastore_server.api import caller_fields
from metastore_server.api.area import Area
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class ScheduledQueryCalls(Area):
    """Scheduled queries. Raises NoSuchObjectException (no such query), AlreadyExistsException,
    InvalidInputException (a schedule we do not read, a missing key) and
    InvalidOperationException (a report on an unknown or ended execution)."""

    @thrift(since="3", rule=auth.API)
    def get_scheduled_query(self, scheduleKey: hms.ScheduledQueryKey) -> hms.ScheduledQuery:  # noqa: N803
        """A scheduled query by namespace and name."""
        return self.catalog.scheduled_queries.get(scheduleKey)

    @thrift(since="3", stamp=caller_fields.scheduled_query_user, rule=auth.API)
    def scheduled_query_maintenance(self, request: hms.ScheduledQueryMaintenanceRequest) -> None:
        """Create, alter or drop a scheduled query."""
        self.catalog.scheduled_queries.maintain(request)

    @thrift(since="3", rule=auth.API)
    def scheduled_query_poll(
        self, request: hms.ScheduledQueryPollRequest
    ) -> hms.ScheduledQueryPollResponse:
        """The namespace's next due query as a new execution (an empty answer: none due)."""
        return self.catalog.scheduled_queries.poll(request)

    @thrift(since="3", rule=auth.API)
    def scheduled_query_progress(self, info: hms.ScheduledQueryProgressInfo) -> None:
        """Record an execution's state."""
        self.catalog.scheduled_queries.progress(info)
