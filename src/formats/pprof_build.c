/* pprof_build.c - a pprof profile assembled and gzipped; see
 * pprof_build.h.  Field numbers are those of pprof's proto/profile.proto
 * (package perftools.profiles). */
#include "pprof_build.h"

#include <string.h>

#include "protobuf.h"

enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10,
    PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12, PROFILE_COMMENT = 13,
    PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
    LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
    LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
    MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILE_OFFSET = 4,
    MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
    FUNCTION_START_LINE = 5,
};

#define MAX_TYPES 8

/* The string table index of s (its UTF-8 form); 0 ("") on failure. */
static uint64_t string_index(sonde_pprof_build *o, const char *s);

/* The top-level field being encoded in o->field, through gzip. */
static void flush_field(sonde_pprof_build *o)
{
    if (!sonde_buf_ok(&o->field) || sonde_gz_write(o->gz, o->field.data, o->field.len) < 0)
        o->failed = 1;
    o->field.len = 0;
}

static void put_value_type(sonde_pprof_build *o, uint32_t field, sonde_pprof_type t)
{
    sonde_pb_uint(&o->msg, VALUE_TYPE_TYPE, string_index(o, t.type));
    sonde_pb_uint(&o->msg, VALUE_TYPE_UNIT, string_index(o, t.unit));
    sonde_pb_message(&o->field, field, &o->msg);
    flush_field(o);
}

int sonde_pprof_build_init(sonde_pprof_build *o, sonde_buf *out, const sonde_pprof_type *types,
                           uint32_t ntypes, sonde_pprof_type period_type, int64_t period,
                           const char *default_type)
{
    memset(o, 0, sizeof *o);
    sonde_buf_init(&o->field);
    sonde_buf_init(&o->msg);
    sonde_buf_init(&o->functions);
    sonde_buf_init(&o->locations);
    sonde_buf_init(&o->mappings);
    sonde_buf_init(&o->text);
    sonde_strtab_init(&o->strings);
    sonde_u64map_init(&o->loc_index);
    o->ntypes = ntypes < MAX_TYPES ? ntypes : MAX_TYPES;
    o->gz = sonde_gz_new(out);
    if (!o->gz || sonde_strtab_intern_cstr(&o->strings, "") != 0) {
        o->failed = 1;
        return -1;
    }
    for (uint32_t i = 0; i < o->ntypes; i++)
        put_value_type(o, PROFILE_SAMPLE_TYPE, types[i]);
    put_value_type(o, PROFILE_PERIOD_TYPE, period_type);
    sonde_pb_int(&o->field, PROFILE_PERIOD, period);
    if (default_type)
        sonde_pb_uint(&o->field, PROFILE_DEFAULT_SAMPLE_TYPE, string_index(o, default_type));
    flush_field(o);
    return o->failed ? -1 : 0;
}

/* s made valid UTF-8 (see the header), in o->text. */
static const char *valid_utf8(sonde_pprof_build *o, const char *s)
{
    o->text.len = 0;
    sonde_buf_text_str(&o->text, s);
    sonde_buf_putc(&o->text, '\0');
    return sonde_buf_ok(&o->text) ? o->text.data : "";
}

static uint64_t string_index(sonde_pprof_build *o, const char *s)
{
    int64_t id = sonde_strtab_intern_cstr(&o->strings, valid_utf8(o, s));
    if (id < 0) {
        o->failed = 1;
        return 0;
    }
    return (uint64_t)id;
}

uint64_t sonde_pprof_function(sonde_pprof_build *o, const char *name, const char *system_name,
                              const char *file, int64_t start_line)
{
    uint64_t id = ++o->nfunctions;
    sonde_pb_uint(&o->msg, FUNCTION_ID, id);
    sonde_pb_uint(&o->msg, FUNCTION_NAME, string_index(o, name));
    /* pprof takes a system name equal to the name for a C++ name to
     * demangle, and cuts "<module>" or "<built-in method len>" to nothing */
    if (strcmp(name, system_name) != 0)
        sonde_pb_uint(&o->msg, FUNCTION_SYSTEM_NAME, string_index(o, system_name));
    sonde_pb_uint(&o->msg, FUNCTION_FILENAME, string_index(o, file));
    sonde_pb_int(&o->msg, FUNCTION_START_LINE, start_line);
    sonde_pb_message(&o->functions, PROFILE_FUNCTION, &o->msg);
    return id;
}

uint64_t sonde_pprof_mapping(sonde_pprof_build *o, uint64_t start, uint64_t limit,
                             uint64_t offset, const char *file, const char *build_id)
{
    uint64_t id = ++o->nmappings;
    sonde_pb_uint(&o->msg, MAPPING_ID, id);
    sonde_pb_uint(&o->msg, MAPPING_MEMORY_START, start);
    sonde_pb_uint(&o->msg, MAPPING_MEMORY_LIMIT, limit);
    sonde_pb_uint(&o->msg, MAPPING_FILE_OFFSET, offset);
    sonde_pb_uint(&o->msg, MAPPING_FILENAME, string_index(o, file));
    sonde_pb_uint(&o->msg, MAPPING_BUILD_ID, string_index(o, build_id));
    sonde_pb_uint(&o->msg, MAPPING_HAS_FUNCTIONS, 1);
    sonde_pb_message(&o->mappings, PROFILE_MAPPING, &o->msg);
    return id;
}

uint64_t sonde_pprof_line_location(sonde_pprof_build *o, uint64_t function, int64_t line)
{
    return sonde_pprof_native_location(o, 0, 0, function, line);
}

uint64_t sonde_pprof_native_location(sonde_pprof_build *o, uint64_t mapping, uint64_t address,
                                     uint64_t function, int64_t line)
{
    uint64_t key = function << 32 | (uint32_t)line;
    uint32_t *slot = sonde_u64map_slot(&o->loc_index, key, (uint32_t)(o->nlocations + 1));
    if (!slot) {
        o->failed = 1;
        return 0;
    }
    if (*slot <= o->nlocations)
        return *slot;
    uint64_t id = ++o->nlocations;
    sonde_buf line_msg;
    sonde_buf_init(&line_msg);
    sonde_pb_uint(&line_msg, LINE_FUNCTION_ID, function);
    sonde_pb_int(&line_msg, LINE_LINE, line);
    sonde_pb_uint(&o->msg, LOCATION_ID, id);
    if (mapping) {
        sonde_pb_uint(&o->msg, LOCATION_MAPPING_ID, mapping);
        sonde_pb_uint(&o->msg, LOCATION_ADDRESS, address);
    }
    sonde_pb_message(&o->msg, LOCATION_LINE, &line_msg);
    sonde_pb_message(&o->locations, PROFILE_LOCATION, &o->msg);
    sonde_buf_free(&line_msg);
    return id;
}

void sonde_pprof_sample(sonde_pprof_build *o, const uint64_t *locations, uint32_t n,
                        const uint64_t *values, const sonde_pprof_label *labels,
                        uint32_t nlabels)
{
    sonde_buf label;
    sonde_buf_init(&label);
    sonde_pb_packed(&o->msg, SAMPLE_LOCATION_ID, locations, n);
    sonde_pb_packed(&o->msg, SAMPLE_VALUE, values, o->ntypes);
    for (uint32_t i = 0; i < nlabels; i++) {
        sonde_pb_uint(&label, LABEL_KEY, string_index(o, labels[i].key));
        if (labels[i].str)
            sonde_pb_uint(&label, LABEL_STR, string_index(o, labels[i].str));
        else
            sonde_pb_int(&label, LABEL_NUM, labels[i].num);
        sonde_pb_message(&o->msg, SAMPLE_LABEL, &label);
    }
    sonde_buf_free(&label);
    sonde_pb_message(&o->field, PROFILE_SAMPLE, &o->msg);
    flush_field(o);
}

void sonde_pprof_times(sonde_pprof_build *o, int64_t time_nanos, int64_t duration_nanos)
{
    if (time_nanos > 0)
        sonde_pb_int(&o->field, PROFILE_TIME_NANOS, time_nanos);
    if (duration_nanos > 0)
        sonde_pb_int(&o->field, PROFILE_DURATION_NANOS, duration_nanos);
    if (o->field.len)
        flush_field(o);
}

void sonde_pprof_comment(sonde_pprof_build *o, const char *text)
{
    sonde_pb_uint(&o->field, PROFILE_COMMENT, string_index(o, text));
    flush_field(o);
}

int sonde_pprof_build_finish(sonde_pprof_build *o)
{
    if (!sonde_buf_ok(&o->functions) || !sonde_buf_ok(&o->locations) ||
        !sonde_buf_ok(&o->mappings))
        o->failed = 1;
    if (o->gz && !o->failed) {
        if (sonde_gz_write(o->gz, o->mappings.data, o->mappings.len) < 0 ||
            sonde_gz_write(o->gz, o->locations.data, o->locations.len) < 0 ||
            sonde_gz_write(o->gz, o->functions.data, o->functions.len) < 0)
            o->failed = 1;
        for (uint32_t i = 0; i < o->strings.count && !o->failed; i++) {
            const char *s = sonde_strtab_get(&o->strings, i);
            sonde_pb_bytes(&o->field, PROFILE_STRING_TABLE, s, strlen(s));
            flush_field(o);
        }
    }
    if (o->gz && sonde_gz_finish(o->gz) < 0)
        o->failed = 1;
    sonde_buf_free(&o->field);
    sonde_buf_free(&o->msg);
    sonde_buf_free(&o->functions);
    sonde_buf_free(&o->locations);
    sonde_buf_free(&o->mappings);
    sonde_buf_free(&o->text);
    sonde_strtab_free(&o->strings);
    sonde_u64map_free(&o->loc_index);
    return o->failed ? -1 : 0;
}
