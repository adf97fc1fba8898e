/* grpc_locks: see grpc_locks.h.
 *
 * gRPC's C core locks absl::Mutex. An abseil built without NDEBUG, as
 * Debian's is, checks each lock taken while another is held against a
 * process-wide graph of lock orders, under one global lock, on every call,
 * on both sides of the socket; what that costs is measured in
 * docs/design/0003-grpc-locks.md. It is a debugging
 * aid that can only abort the process; release builds of abseil leave it
 * off. Abseil offers no C API for the switch, so the C++ function is found
 * by its mangled name, spelt with the inline namespace that abseil's
 * options.h (plain preprocessor definitions) names. */
#include "grpc_locks.h"

#include <absl/base/options.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define CS_STR_(x) #x
#define CS_STR(x) CS_STR_(x)

/* absl::OnDeadlockCycle::kIgnore */
#define DEADLOCK_IGNORE 0

void cs_grpc_locks_unchecked(void)
{
    char name[192];
    void (*set_mode)(int);

#if ABSL_OPTION_USE_INLINE_NAMESPACE
    const char *ns = CS_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
    snprintf(name, sizeof(name),
             "_ZN4absl%zu%s29SetMutexDeadlockDetectionModeENS0_15OnDeadlockCycleE", strlen(ns), ns);
#else
    snprintf(name, sizeof(name), "_ZN4absl29SetMutexDeadlockDetectionModeENS_15OnDeadlockCycleE");
#endif
    /* POSIX's way to turn dlsym's object pointer into a function pointer. */
    *(void **)&set_mode = dlsym(RTLD_DEFAULT, name);
    if (set_mode != NULL)
        set_mode(DEADLOCK_IGNORE);
}
