/* map_fold: protobuf's rule for a map whose key comes twice on the wire,
 * the last one wins, applied to an unpacked message. protobuf-c keeps a map
 * as a repeated field of its entries, every one of them; cschedd would then
 * store and show a job's env, labels or secret_env with a name twice, while
 * the command gets only the last. Any thread; allocates only while it
 * folds. */
#ifndef CS_MAP_FOLD_H
#define CS_MAP_FOLD_H

#include <protobuf-c/protobuf-c.h>

/* Folds every map in msg and in the messages it holds, to the last entry of
 * each key, the kept ones in the order of their last occurrence; frees the
 * entries dropped (msg unpacked with the default allocator). */
void cs_map_fold(ProtobufCMessage *msg);

#endif
