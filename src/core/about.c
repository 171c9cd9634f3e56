/* about.c - what a profile says of its run; see about.h. */
#include "about.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void sonde_about_init(sonde_about *a)
{
    memset(a, 0, sizeof *a);
    a->wall = a->cpu = -1;
}

void sonde_about_clear(sonde_about *a)
{
    for (uint32_t i = 0; i < a->argc; i++)
        free(a->argv[i]);
    free(a->argv);
    free(a->executable);
    free(a->version);
    free(a->verdict);
    free(a->cwd);
    sonde_about_init(a);
}

int sonde_about_known(const sonde_about *a)
{
    return a->argc || a->executable || a->version || a->start_ns || a->wall >= 0 ||
           a->cpu >= 0 || a->processes || a->verdict || a->cwd;
}

static char *copy(const char *text, size_t len)
{
    if (len > SONDE_ABOUT_MAX_TEXT)
        len = SONDE_ABOUT_MAX_TEXT;
    char *s = malloc(len + 1);
    if (s) {
        memcpy(s, text, len);
        s[len] = '\0';
    }
    return s;
}

int sonde_about_set(char **field, const char *text, size_t len)
{
    char *s = copy(text, len);
    if (!s)
        return -1;
    free(*field);
    *field = s;
    return 0;
}

int sonde_about_add_arg(sonde_about *a, const char *arg, size_t len)
{
    if (a->argc >= SONDE_ABOUT_MAX_ARGS)
        return 0;
    char **argv = realloc(a->argv, (a->argc + 1) * sizeof *argv);
    if (!argv)
        return -1;
    a->argv = argv;
    if (!(argv[a->argc] = copy(arg, len)))
        return -1;
    a->argc++;
    return 0;
}

void sonde_about_command(sonde_buf *b, const sonde_about *a)
{
    static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789-_./=:,+@%";
    for (uint32_t i = 0; i < a->argc; i++) {
        const char *arg = a->argv[i];
        sonde_buf_puts(b, i ? " " : "");
        if (*arg && arg[strspn(arg, plain)] == '\0') {
            sonde_buf_puts(b, arg);
            continue;
        }
        sonde_buf_putc(b, '\'');
        for (const char *c = arg; *c; c++) {
            if (*c == '\'')
                sonde_buf_puts(b, "'\\''"); /* out of the quotes, a quoted ', back in */
            else
                sonde_buf_putc(b, *c);
        }
        sonde_buf_putc(b, '\'');
    }
}

void sonde_about_time_format(int64_t ns, char *out)
{
    time_t secs = (time_t)(ns / 1000000000);
    struct tm tm;
    if (ns < 0 || !gmtime_r(&secs, &tm)) {
        snprintf(out, SONDE_ABOUT_TIME_LEN, "1970-01-01T00:00:00.000000Z");
        return;
    }
    snprintf(out, SONDE_ABOUT_TIME_LEN, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (int)(ns % 1000000000 / 1000));
}

/* n digits of text as a number into *v; the text after them, or NULL. */
static const char *digits(const char *text, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (text[i] < '0' || text[i] > '9')
            return NULL;
        *v = *v * 10 + (text[i] - '0');
    }
    return text + n;
}

int sonde_about_time_parse(const char *text, int64_t *ns)
{
    int year, mon, day, hour, min, sec;
    const char *t = digits(text, 4, &year);
    if (!t || *t++ != '-' || !(t = digits(t, 2, &mon)) || *t++ != '-' ||
        !(t = digits(t, 2, &day)) || *t++ != 'T' || !(t = digits(t, 2, &hour)) ||
        *t++ != ':' || !(t = digits(t, 2, &min)) || *t++ != ':' || !(t = digits(t, 2, &sec)))
        return -1;
    int64_t frac = 0, scale = 1000000000;
    if (*t == '.') {
        for (t++; *t >= '0' && *t <= '9'; t++)
            if (scale > 1) {
                scale /= 10;
                frac += (*t - '0') * scale;
            }
    }
    if (strcmp(t, "Z") != 0 || year < 1970 || mon < 1 || mon > 12 || day < 1 || day > 31 ||
        hour > 23 || min > 59 || sec > 60)
        return -1;
    struct tm tm = { .tm_year = year - 1900, .tm_mon = mon - 1, .tm_mday = day,
                     .tm_hour = hour, .tm_min = min, .tm_sec = sec };
    time_t secs = timegm(&tm);
    if (secs == (time_t)-1 || secs > (time_t)9e9)
        return -1;
    *ns = (int64_t)secs * 1000000000 + frac;
    return 0;
}
