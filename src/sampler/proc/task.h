/* task.h - a process's or a thread's scheduling state and a process's
 * parent, as /proc/PID/stat (or /proc/PID/task/TID/stat) gives them; a
 * thread's tracer (its status file); whether a process still runs; the
 * end of sonde's child, when a capture's wait took it. */
#ifndef SONDE_PROC_TASK_H
#define SONDE_PROC_TASK_H

#include <stddef.h>

/* The fields after the command name in /proc/PID/stat (tid 0) or
 * /proc/PID/task/TID/stat ("pid (comm) S ppid ...": they follow the last
 * ')', since comm may hold spaces and parentheses), read into buf; NULL
 * when the file cannot be read. */
const char *sonde_proc_task_fields(int pid, int tid, char *buf, size_t size);

/* The state letter of thread tid of pid (tid 0: the process itself): 'R',
 * 'S', 'D', 't', 'T', 'Z', 'X' ...; 0 when it cannot be read (gone, or not
 * ours to see). */
char sonde_proc_task_state(int pid, int tid);

/* The process id of pid's parent (its real parent, also while a tracer
 * is attached); 0 when it cannot be read. */
int sonde_proc_task_parent(int pid);

/* The process id of the tracer attached to thread tid of pid (TracerPid
 * in /proc/PID/task/TID/status): 0 when none is, or it cannot be read. */
int sonde_proc_task_tracer(int pid, int tid);

/* 1 while process pid runs: some thread of it is neither a zombie nor
 * dead.  A leader that is a zombie does not end the process while other
 * threads run: it is one while a thread other than the main one exec's
 * (the kernel ends the leader before the exec'ing thread takes its id),
 * and after the main thread alone has exited.  0 once every thread has
 * ended (a zombie waiting for its parent) or pid cannot be seen: for a
 * child of sonde's, as its parent is told (waitid, never reaping it; for
 * at most 10 s while /proc shows no thread running: a zombie thread a
 * tracer has not reaped keeps a group from ending); for another process,
 * as seen three times over 4 ms (an exec passes through an instant that
 * looks like the end).  -EMFILE (or -ENFILE, -ENOMEM) when sonde cannot open
 * /proc's files to look: out of descriptors is not the process's end. */
int sonde_proc_alive(int pid);

/* The end of sonde's own child, when a wait that was not the command's
 * took it (the native capture waits for each thread it stops, and the
 * program's main thread may end between its look and its wait): kept
 * here for the command's own wait, which then finds no child. */
void sonde_proc_reaped_keep(int pid, int status);
/* 1 and the status kept for pid into *status, or 0 when none was. */
int sonde_proc_reaped_take(int pid, int *status);

#endif
