# Static types for row_scan.py when Cython compiles it (pure Python mode); plain Python ignores
# this file.
cimport cython

cdef int _ROW_VERSION, _HEADER, _CUT, _INTEGRAL, _DATE, _INTEGRAL_WIDTH, _DATE_WIDTH

cdef unsigned long long _u32(bytes buf, Py_ssize_t p)

@cython.locals(i=Py_ssize_t)
cdef bint _same(bytes buf, Py_ssize_t p, bytes name)

@cython.locals(size=Py_ssize_t, count=Py_ssize_t, lengths=Py_ssize_t, pos=Py_ssize_t,
               wanted=Py_ssize_t,
               found=Py_ssize_t, name_len=Py_ssize_t, value_len=Py_ssize_t,
               value_at=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, column=bytes)
cdef Py_ssize_t _columns(bytes blob, tuple columns, list values) except -1

@cython.locals(wanted=tuple, width=Py_ssize_t, values=list, out=list, read=Py_ssize_t,
               incomplete=Py_ssize_t, found=Py_ssize_t, key=object)
cpdef tuple packed_columns(object pairs, object columns, object key_test=*, Py_ssize_t limit=*,
                           bint keys=*, list cut=*)

@cython.locals(out=list, i=Py_ssize_t)
cpdef list passing(object keys, object key_test)

cdef list _LENGTHS

@cython.locals(pieces=list, lengths=list, n=Py_ssize_t, i=Py_ssize_t, item=bytes)
cpdef bytes length_prefixed(list items)

cdef Py_ssize_t _text_end(bytes data, Py_ssize_t pos, Py_ssize_t size) except -1

@cython.locals(tag=int, end=Py_ssize_t)
cdef Py_ssize_t _part_end(bytes data, Py_ssize_t pos, Py_ssize_t size) except -1

@cython.locals(parts=list, size=Py_ssize_t, pos=Py_ssize_t, end=Py_ssize_t)
cpdef list order_parts(bytes data, Py_ssize_t start, Py_ssize_t count)

@cython.locals(size=Py_ssize_t, pos=Py_ssize_t)
cdef bytes _nth_part(bytes data, Py_ssize_t start, Py_ssize_t index)

cdef class PartMemo:
    cdef public object test
    cdef public Py_ssize_t start, count
    cdef public tuple indexes
    cdef public bint spelled
    cdef public dict verdicts

@cython.locals(names=list, lengths=list, pieces=list, body=list, i=Py_ssize_t, n=Py_ssize_t,
               name=bytes, value=bytes)
cpdef bytes packed_row(object row)

cdef bytes _length(Py_ssize_t n)

cdef bytes _VERSION_BYTE
