# block.py - a Python program blocked in a ctypes call of a test library:
#   python block.py LIBRARY FUNCTION
# The library prints "ready" once it blocks reading one byte from stdin.
import ctypes
import sys


def inner(lib, name):
    return getattr(lib, name)(1, 0, 5)


def outer(lib, name):
    return inner(lib, name) + 1


outer(ctypes.CDLL(sys.argv[1]), sys.argv[2])
