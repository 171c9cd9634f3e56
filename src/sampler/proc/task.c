/* task.c - a process's or a thread's state and parent; see task.h. */
#include "task.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *sonde_proc_task_fields(int pid, int tid, char *buf, size_t size)
{
    char path[96];
    if (tid)
        snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    else
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t got = read(fd, buf, size - 1);
    close(fd);
    if (got <= 0)
        return NULL;
    buf[got] = '\0';
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && paren[2] ? paren + 2 : NULL;
}

char sonde_proc_task_state(int pid, int tid)
{
    char buf[512];
    const char *fields = sonde_proc_task_fields(pid, tid, buf, sizeof buf);
    return fields ? fields[0] : 0;
}

int sonde_proc_task_parent(int pid)
{
    char buf[512];
    const char *fields = sonde_proc_task_fields(pid, 0, buf, sizeof buf);
    if (!fields || fields[1] != ' ')
        return 0;
    return atoi(fields + 2);
}
