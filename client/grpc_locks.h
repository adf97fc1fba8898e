/* grpc_locks: gRPC's mutexes without abseil's deadlock detection.
 *
 * cs_grpc_locks_unchecked turns the detection off for the whole process;
 * call it before grpc_init. Safe to call more than once and from any
 * thread. Where the abseil in use has no such switch (another ABI), it does
 * nothing. */
#ifndef CS_GRPC_LOCKS_H
#define CS_GRPC_LOCKS_H

void cs_grpc_locks_unchecked(void);

#endif
