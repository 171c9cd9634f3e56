/* cfunc_label.c - names C functions the way cProfile does, so that .prof
 * keys match cProfile's: a module function is "<built-in method
 * time.sleep>", a method is the repr of the descriptor found on the type
 * of its self ("<method 'append' of 'list' objects>"), and a function
 * without self is "<name>" or "<module.name>". */
#include "tracer.h"

static PyObject *module_name(PyObject *mod)
{
    if (!mod)
        return NULL;
    if (PyUnicode_Check(mod)) {
        Py_INCREF(mod);
        return mod;
    }
    if (PyModule_Check(mod)) {
        PyObject *name = PyModule_GetNameObject(mod);
        if (!name)
            PyErr_Clear();
        return name;
    }
    return NULL;
}

PyObject *tracer_cfunc_label(PyObject *cfunc)
{
    PyCFunctionObject *fn = (PyCFunctionObject *)cfunc;
    const char *ml_name = fn->m_ml->ml_name;
    if (fn->m_self == NULL) {
        PyObject *mod = module_name(fn->m_module);
        PyObject *label = NULL;
        if (mod && PyUnicode_CompareWithASCIIString(mod, "builtins") != 0)
            label = PyUnicode_FromFormat("<%U.%s>", mod, ml_name);
        else
            label = PyUnicode_FromFormat("<%s>", ml_name);
        Py_XDECREF(mod);
        return label;
    }
    PyObject *name = PyUnicode_FromString(ml_name);
    if (name) {
        PyObject *found = _PyType_Lookup(Py_TYPE(fn->m_self), name);
        Py_DECREF(name);
        if (found) {
            Py_INCREF(found);
            PyObject *label = PyObject_Repr(found);
            Py_DECREF(found);
            if (label)
                return label;
        }
    }
    PyErr_Clear();
    if (fn->m_module && PyUnicode_Check(fn->m_module))
        return PyUnicode_FromFormat("<built-in method %S.%s>", fn->m_module, ml_name);
    return PyUnicode_FromFormat("<built-in method %s>", ml_name);
}
