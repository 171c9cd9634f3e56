/* code_name.c - naming code objects, and Python's text as profile bytes;
 * see code_name.h. */
#include "code_name.h"

PyObject *sonde_text_bytes(PyObject *s, const char *fallback)
{
    if (!s || !PyUnicode_Check(s))
        return PyBytes_FromString(fallback);
    PyObject *b = PyUnicode_AsUTF8String(s);
    if (!b && PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
        /* Surrogates: the escapes of bytes the file system decoding could
         * not read, given back as those bytes. */
        PyErr_Clear();
        b = PyUnicode_EncodeFSDefault(s);
        if (!b && PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
            PyErr_Clear(); /* a surrogate no decoding makes: shown escaped */
            b = PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace");
        }
    }
    return b;
}

uint32_t sonde_code_func(sonde_profile *p, PyCodeObject *code)
{
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *qualname = code->co_qualname;
#else
    PyObject *qualname = code->co_name;
#endif
    PyObject *file = sonde_text_bytes(code->co_filename, "?");
    PyObject *name = file ? sonde_text_bytes(code->co_name, "?") : NULL;
    PyObject *qual = name ? sonde_text_bytes(qualname, "?") : NULL;
    uint32_t f = SONDE_NO_FUNC;
    if (qual)
        f = sonde_profile_func(p, PyBytes_AS_STRING(file), code->co_firstlineno,
                               PyBytes_AS_STRING(name), PyBytes_AS_STRING(qual),
                               SONDE_FUNC_PYTHON);
    else
        PyErr_Clear();
    Py_XDECREF(qual);
    Py_XDECREF(name);
    Py_XDECREF(file);
    return f;
}

const char *sonde_keep_text(PyObject *keep, PyObject *s)
{
    PyObject *b = sonde_text_bytes(s, "");
    int kept = b && PyList_Append(keep, b) == 0;
    Py_XDECREF(b); /* the list holds it */
    return kept ? PyBytes_AS_STRING(b) : NULL;
}

const char *sonde_keep_source(PyObject *keep, PyObject *source_of, PyObject *file, int line)
{
    PyObject *text = PyObject_CallFunction(source_of, "Oi", file, line);
    const char *s = text ? sonde_keep_text(keep, text) : NULL;
    Py_XDECREF(text);
    return s;
}
