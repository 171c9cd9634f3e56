/* layout.c - picks a fixed CPython layout (3.8-3.12), and reads a frame's instruction; see
 * layout.h (debug_offsets.c makes 3.13+'s). */
#include "layout.h"


const sonde_py_layout *sonde_py_layout_for(int major, int minor)
{
    if (major != 3)
        return NULL;
    switch (minor) {
    case 8: return &sonde_py_layout_38;
    case 9: return &sonde_py_layout_39;
    case 10: return &sonde_py_layout_310;
    case 11: return &sonde_py_layout_311;
    case 12: return &sonde_py_layout_312;
    default: return NULL;
    }
}

/* Code objects hold far fewer code units than this; larger indexes mean garbage. */
#define MAX_CODE_UNITS ((uint32_t)1 << 28)

int sonde_py_instr_index(const sonde_py_layout *l, uint64_t raw, uint64_t code,
                         uint32_t *index)
{
    uint64_t units;
    switch (l->frame_instr_kind) {
    case SONDE_PY_INSTR_LASTI_BYTES:
    case SONDE_PY_INSTR_LASTI_UNITS: {
        int32_t lasti = (int32_t)(uint32_t)raw;
        if (lasti < 0)
            return -1;
        if (l->frame_instr_kind == SONDE_PY_INSTR_LASTI_UNITS)
            units = (uint64_t)lasti;
        else if (lasti % 2 == 0)
            units = (uint64_t)lasti / 2;
        else
            return -1;
        break;
    }
    case SONDE_PY_INSTR_POINTER: {
        if (l->code_code_adaptive == SONDE_PY_ABSENT || code > UINT64_MAX - l->code_code_adaptive)
            return -1;
        uint64_t start = code + l->code_code_adaptive;
        if (raw < start || (raw - start) % 2 != 0)
            return -1;
        units = (raw - start) / 2;
        break;
    }
    default:
        return -1;
    }
    if (units >= MAX_CODE_UNITS)
        return -1;
    *index = (uint32_t)units;
    return 0;
}
