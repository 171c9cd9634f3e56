/* test_native_demangle.c - the bounded demangler (sampler/native/demangle.h):
 * ordinary C++ names as libstdc++'s own __cxa_demangle gives them, a
 * demangling bomb (570 MB demangled) kept mangled, the helper started
 * again after it, names that are not C++ or over the input bound kept. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/native/cython_name.h"
#include "sampler/native/demangle.h"

char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

#define BOMB_NESTING 26

/* f(P<P<...P<int, int>...>>) nested n deep, each level naming the one
 * below twice through a substitution: g++'s own mangling of it. */
static void bomb_name(char *out, size_t outlen, int n)
{
    static const char seq[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    size_t at = (size_t)snprintf(out, outlen, "_Z4bomb1P");
    for (int k = 0; k < n - 1; k++)
        at += (size_t)snprintf(out + at, outlen - at, "IS_");
    at += (size_t)snprintf(out + at, outlen - at, "IiiE");
    for (int k = 0; k < n - 1; k++)
        at += (size_t)snprintf(out + at, outlen - at, "S%c_E", seq[k]);
}

/* name demangled by sonde matches libstdc++'s own result. */
static void check_ordinary(const char *name, const char *want)
{
    char out[1024];
    int status = -1;
    char *reference = __cxa_demangle(name, NULL, NULL, &status);
    check(status == 0 && reference && strcmp(reference, want) == 0, "reference of %s", name);
    check(sonde_native_demangle(name, out, sizeof out) == 1, "%s demangled", name);
    check_str(out, want);
    free(reference);
}

/* Cython's function symbols (as scikit-learn, pandas and numpy's wheels
 * have them) and what sonde names them; NULL: left as they are. */
static void check_cython(const char *sym, const char *want)
{
    char out[256] = "untouched";
    int named = sonde_cython_name(sym, out, sizeof out);
    check(named == (want != NULL), "%s: named %d", sym, named);
    check_str(out, want ? want : "untouched");
}

static void cython_names(void)
{
    check_cython("__pyx_fuse_0__pyx_f_7sklearn_5utils_8_sorting_introsort_3way",
                 "sklearn.utils._sorting.introsort_3way");
    check_cython("__pyx_pw_6pandas_5_libs_3lib_15maybe_convert_objects",
                 "pandas._libs.lib.maybe_convert_objects");
    check_cython("__pyx_pf_5numpy_6random_6mtrand_11RandomState_26random_sample",
                 "numpy.random.mtrand.RandomState.random_sample");
    check_cython("__pyx_fuse_1_0__pyx_pw_7sklearn_9neighbors_10_quad_tree_1f",
                 "sklearn.neighbors._quad_tree.f");
    check_cython("__pyx_gb_4lxml_5etree_9_Document_2generator", "lxml.etree._Document.generator");
    /* Not a Cython function: a module's init, a type slot, plain C, a
     * prefix with nothing after it, lengths that run past the end. */
    check_cython("__pyx_pymod_exec_lib", NULL);
    check_cython("__pyx_tp_dealloc_6pandas_5_libs_3lib_Seen", NULL);
    check_cython("PyObject_Call", NULL);
    check_cython("__pyx_f_", NULL);
    check_cython("__pyx_f_99sklearn_x", NULL);
    check_cython("__pyx_fuse__pyx_f_3abc_1f", NULL);
}

void test_native_demangle(void)
{
    cython_names();
    char out[1024], bomb[256];
    check_ordinary("_ZN2ns6helperE1PIiiE", "ns::helper(P<int, int>)");
    check_ordinary("_ZNSt6vectorIiSaIiEE9push_backERKi",
                   "std::vector<int, std::allocator<int> >::push_back(int const&)");

    /* the bomb: 188 bytes, each level doubling what it names; libstdc++
     * alone prints 570 MB (g++ 12 mangled it so, nm read it) */
    bomb_name(bomb, sizeof bomb, BOMB_NESTING);
    check_str(bomb, "_Z4bomb1PIS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_IS_"
                    "IS_IS_IS_IiiES0_ES1_ES2_ES3_ES4_ES5_ES6_ES7_ES8_ES9_ESA_ESB_ESC_ESD_ESE_ESF_"
                    "ESG_ESH_ESI_ESJ_ESK_ESL_ESM_ESN_ESO_E");
    check(sonde_native_demangle(bomb, out, sizeof out) == 0, "the bomb is not demangled");
    check_str(out, bomb);
    /* given up once, kept mangled again; ordinary names still demangled */
    check(sonde_native_demangle(bomb, out, sizeof out) == 0, "the bomb again");
    check_str(out, bomb);
    check_ordinary("_ZN2ns6helperE1PIiiE", "ns::helper(P<int, int>)");
    /* a small bomb within every bound is demangled, as libstdc++ does */
    bomb_name(bomb, sizeof bomb, 3);
    check(sonde_native_demangle(bomb, out, sizeof out) == 1, "a small nest is demangled");
    check_str(out, "bomb(P<P<P<int, int>, P<int, int> >, P<P<int, int>, P<int, int> > >)");

    /* not C++, not a valid name, over the input bound: kept as they are */
    check(sonde_native_demangle("PyEval_EvalFrameDefault", out, sizeof out) == 0, "C name");
    check_str(out, "PyEval_EvalFrameDefault");
    check(sonde_native_demangle("_Z!!", out, sizeof out) == 0, "invalid name");
    check_str(out, "_Z!!");
    char *huge = malloc(SONDE_DEMANGLE_MAX_MANGLED + 16);
    check(huge != NULL, "malloc");
    if (huge) {
        memset(huge, 'i', SONDE_DEMANGLE_MAX_MANGLED + 15);
        memcpy(huge, "_Z1f", 4);
        huge[SONDE_DEMANGLE_MAX_MANGLED + 15] = '\0';
        check(sonde_native_demangle(huge, out, sizeof out) == 0, "over the input bound");
        check_u64(strlen(out), sizeof out - 1);
        check(strncmp(out, huge, sizeof out - 1) == 0, "kept, cut to fit");
        free(huge);
    }
    /* a result cut to the room given */
    char small[8];
    check(sonde_native_demangle("_ZN2ns6helperE1PIiiE", small, sizeof small) == 1, "cut");
    check_str(small, "ns::hel");
}
