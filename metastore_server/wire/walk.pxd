# Static types for wire_walk.py when Cython compiles it (pure Python mode); plain Python ignores
# this file.
cimport cython

cdef long long _MESSAGE, _STRUCT, _LIST, _MAP
cdef int _STOP, _STRING, _STRUCT_TYPE, _MAP_TYPE, _SET_TYPE, _LIST_TYPE
cdef long long _VERSION_MASK, _VERSION_1
cdef bytes _WIDTH, _VALUE_TYPE

cdef bint _utf8(bytes data)

@cython.locals(value=cython.longlong)
cdef long long _i32(bytes buf, Py_ssize_t p)

cdef class WireWalker:
    cdef public int max_depth
    cdef public object error, method, seqid
    cdef public long long messages, list_keys_last, text_suspect_last
    cdef bint _skip_text
    cdef bytes _carry
    cdef long long _skip
    cdef int _depth
    cdef object _kinds, _counts, _types

    @cython.locals(size=Py_ssize_t, buf=bytes, base=Py_ssize_t, p=Py_ssize_t, end=Py_ssize_t,
                   kind=cython.longlong, t=int, q=Py_ssize_t, w=int, after=cython.longlong,
                   length=cython.longlong, e=int, n=cython.longlong, k=int, v=int,
                   max_depth=int, depth=int, width=bytes, valid=bytes,
                   kinds=cython.longlong[::1], counts=cython.longlong[::1],
                   types=cython.longlong[::1])
    cpdef Py_ssize_t feed(self, bytes data) except -1

    @cython.locals(first=cython.longlong, length=cython.longlong, start=Py_ssize_t, tail=int,
                   after=Py_ssize_t)
    cdef Py_ssize_t _message_header(self, bytes buf, Py_ssize_t p, Py_ssize_t end) except -3

    cdef Py_ssize_t _wait(self, bytes buf, Py_ssize_t p, int depth, Py_ssize_t size)

    cdef Py_ssize_t _fail(self, Py_ssize_t p, Py_ssize_t base, str error)

@cython.locals(value=cython.longlong)
cdef long long _s32(bytes buf, Py_ssize_t p)

@cython.locals(size=Py_ssize_t, w=int, n=cython.longlong, ft=int, e=int, k=int, v=int)
cpdef Py_ssize_t value_end(bytes buf, Py_ssize_t p, int t, int depth)

@cython.locals(fields=list, size=Py_ssize_t, t=int, fid=int, end=Py_ssize_t)
cpdef tuple struct_fields(bytes buf, Py_ssize_t p)
