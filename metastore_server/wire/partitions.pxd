# Static types for wire_partitions.py when Cython compiles it (pure Python mode); plain Python
# ignores this file.
cimport cython
from metastore_server.wire.walk cimport value_end

cdef int _STRING, _I32, _BOOL, _MAP, _LIST, _PARAMETERS, _SD_LOCATION, _SD_SKEWED, _SD_SUBDIRS
cdef object _I32_FIELD, _STRING_HEAD, _LIST_HEAD, _MAP_HEAD, _LENGTH
cdef dict _PARTITION_TYPES, _SD_TYPES
cdef bytes _EMPTY_SKEW, _NOT_SUBDIRS

@cython.locals(found=list, end=Py_ssize_t, fields=dict, item=tuple, fid=int, ftype=int,
               at=Py_ssize_t, stop=Py_ssize_t)
cdef Py_ssize_t _read_fields(object part, bytes buf, Py_ssize_t start) except -1

cdef Py_ssize_t PARTITION_COST, FIELD_COST

@cython.locals(count=cython.longlong, p=Py_ssize_t, parts=list)
cpdef tuple read_partitions(bytes buf, Py_ssize_t start, object charge=*)

@cython.locals(fields=dict, kept=list, out=list, fid=int, item=tuple)
cpdef bytes stored_bytes(object part, object values, long long create_time,
                         long long last_access_time, object parameters, object location,
                         bint defaults)

@cython.locals(whole=tuple, sd_pieces=dict, fid=int, start=Py_ssize_t, end=Py_ssize_t)
cdef bytes _sd_bytes(bytes buf, object sd, Py_ssize_t at, object location, bint defaults)

@cython.locals(fid=int)
cdef bytes _joined(dict pieces)

@cython.locals(value=cython.longlong)
cdef long long _i32(bytes buf, Py_ssize_t p) except? -1

@cython.locals(count=cython.longlong, n=cython.longlong, out=list, i=cython.longlong)
cdef list _strings(bytes buf, Py_ssize_t p)

@cython.locals(count=cython.longlong, n=cython.longlong, out=dict, i=cython.longlong, key=str)
cdef dict _string_map(bytes buf, Py_ssize_t p)

@cython.locals(start=Py_ssize_t, size=Py_ssize_t, fid=int, ftype=int, end=Py_ssize_t,
               last=int, in_order=bint, skewed=bint, subdirs=bint)
cdef object _sd(bytes buf, Py_ssize_t p)

@cython.locals(data=bytes)
cdef bytes _string_field(int fid, str text)

@cython.locals(data=bytes)
cdef void _add_values(list out, object values) except *

@cython.locals(data=bytes)
cdef void _add_map(list out, int fid, object mapping) except *
