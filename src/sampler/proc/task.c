/* task.c - a process's or a thread's scheduling state; see task.h. */
#include "task.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

char sonde_proc_task_state(int pid, int tid)
{
    char path[96], buf[512];
    if (tid)
        snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    else
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0)
        return 0;
    buf[got] = '\0';
    const char *paren = strrchr(buf, ')'); /* "pid (comm) S ...": the state follows the last ')' */
    return paren && paren[1] == ' ' ? paren[2] : 0;
}
