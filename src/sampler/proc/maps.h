/* maps.h - the memory map of another process, from /proc/PID/maps.
 *
 * Each line of /proc/PID/maps becomes one sonde_map: its address range,
 * permissions, file offset and the path of the file behind it ("" for
 * anonymous memory, "[heap]" and the like for the kernel's own names).
 * The parser is bounded: at most SONDE_MAPS_MAX_ENTRIES lines and
 * SONDE_MAPS_MAX_TEXT bytes. */
#ifndef SONDE_MAPS_H
#define SONDE_MAPS_H

#include <stddef.h>
#include <stdint.h>

#define SONDE_MAPS_MAX_ENTRIES 65536           /* vm.max_map_count is 65530 */
#define SONDE_MAPS_MAX_TEXT (64u * 1024 * 1024)

typedef struct sonde_map {
    uint64_t start, end;   /* [start, end) in the process */
    uint64_t offset;       /* file offset of start */
    char perms[5];         /* "r-xp" and the like, NUL-terminated */
    int deleted;           /* the kernel marked the file " (deleted)" */
    uint64_t dev;          /* the file's device (makedev of the major:minor shown), */
    uint64_t inode;        /* and inode: 0 for anonymous memory */
    const char *path;      /* without " (deleted)"; "\012" undone to '\n' */
} sonde_map;

typedef struct sonde_maps {
    sonde_map *v;          /* in the kernel's (address) order */
    size_t count;
    char *text;            /* owns the bytes every path points into */
} sonde_maps;

/* Reads /proc/PID/maps.  0, or a negative errno: -ENOENT when there is no
 * such process, -EACCES when it may not be read, -E2BIG past the bounds,
 * -EINVAL for a line that is not in the kernel's format. */
int sonde_maps_read(int pid, sonde_maps *m);
/* Parses text[0..len) in the format of /proc/PID/maps; same codes. */
int sonde_maps_parse(sonde_maps *m, const char *text, size_t len);
void sonde_maps_free(sonde_maps *m);

/* A path by which this process opens the very file behind m, into out.  The kernel names a
 * mapped file as the reader sees it where the reader's root reaches it (a target in a chroot,
 * or in a mount namespace of its own over the host's folders), as the target sees it where it
 * does not (a container's files), and through the target's root where only the target's
 * namespace has the mount (a folder bind-mounted into a container's root).  So
 * /proc/PID/root + the path, the path itself, and /proc/PID/root + the path less the target's
 * root are tried, and the first whose device and inode are the mapping's is taken (the inode
 * alone where a file system shows another device; /proc/PID/root + the path where none
 * matches).  A deleted file is reached through /proc/PID/map_files.  0, or -ENAMETOOLONG. */
int sonde_maps_file(int pid, const sonde_map *m, char *out, size_t outlen);

/* The first mapping of path at file offset 0 (where the file's ELF header
 * is mapped), or NULL.  Linear: for one path (sonde_maps_bases: all). */
const sonde_map *sonde_maps_find_base(const sonde_maps *m, const char *path);

#define SONDE_MAPS_NO_BASE UINT32_MAX

/* For every mapping i, base[i]: the index of the nearest mapping of its
 * path at file offset 0 (where the file's ELF header is mapped) at or
 * before it, else the first after it, or SONDE_MAPS_NO_BASE (none, or
 * anonymous memory).  base holds m->count
 * entries.  One pass through a hash of the paths: linear in the mappings.
 * 0, or -ENOMEM. */
int sonde_maps_bases(const sonde_maps *m, uint32_t *base);

#endif
