# gdb_frames.py - the stopped thread's frames as gdb sees them, for test_native.c.
# One line per frame, innermost first.  Left out: the tail-call frames gdb
# infers from DWARF call-site entries (a function that jumped to another
# instead of calling it has no frame on the stack; an unwinder cannot see it):
#   FRAME <pc hex> <line or 0> <file or ?>\t<ELF symbol or ?>\t
# The symbol is gdb's `info symbol` (its minimal symbols: .symtab/.dynsym),
# looked up at pc - 1 for return addresses, as an unwinder names callers;
# for an inlined function's frame (its pc is that of the frame holding its
# code), the function's name from DWARF's inline records, marked:
#   FRAME <pc hex> <line or 0> <file or ?>\t<function>\tinlined
import gdb

frame = gdb.newest_frame()
innermost = True
while frame is not None:
    if frame.type() == gdb.INLINE_FRAME:
        sal = frame.find_sal()
        name = sal.symtab.filename if sal.symtab else "?"
        print("FRAME %x %d %s\t%s\tinlined" % (frame.pc(), sal.line if sal.symtab else 0, name,
                                              frame.name() or "?"))
    elif frame.type() != gdb.TAILCALL_FRAME:
        pc = frame.pc()
        at = pc if innermost or frame.type() == gdb.SIGTRAMP_FRAME else pc - 1
        text = gdb.execute("info symbol 0x%x" % at, to_string=True).strip()
        symbol = "?"
        if not text.startswith("No symbol"):
            symbol = text.split(" + ")[0] if " + " in text else text.split(" in section ")[0]
        sal = frame.find_sal()
        name = sal.symtab.filename if sal.symtab else "?"
        print("FRAME %x %d %s\t%s\t" % (pc, sal.line if sal.symtab else 0, name, symbol))
        innermost = False  # the frames above hold return addresses
    frame = frame.older()
