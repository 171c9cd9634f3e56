/* dump_frames.h - a frame as sonde dump prints it: "qualname (file:line)", and below it that
 * line of the source, as the process sees the file. */
#ifndef SONDE_DUMP_FRAMES_H
#define SONDE_DUMP_FRAMES_H

#include "../core/buf.h"
#include "../core/profile.h"
#include "../sampler/walker.h"

/* Frame f (its function in p) of process pid, at `indent` spaces, its source line 4 further. */
void cli_dump_frame(sonde_buf *b, const sonde_profile *p, int pid, const sonde_frame_sample *f,
                    int indent);

#endif
