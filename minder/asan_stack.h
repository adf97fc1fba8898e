/* A stack buffer lent to the child of a clone(CLONE_VM | CLONE_VFORK): the
 * child's frames leave AddressSanitizer's red-zone marks in it, and having
 * exec'd never return through them to clear them, so the parent clears them
 * before its own frames use that memory again (docs/design/0037). */
#ifndef CS_ASAN_STACK_H
#define CS_ASAN_STACK_H

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CS_ASAN_UNPOISON(addr, size) ASAN_UNPOISON_MEMORY_REGION(addr, size)
#else
#define CS_ASAN_UNPOISON(addr, size) ((void)(addr), (void)(size))
#endif

#endif
