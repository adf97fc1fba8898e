/* queue: the intrusive singly-linked FIFO and the container_of of server/.
 * A struct cs_qlink lives inside each item; the queue holds head and tail,
 * so pushing at the tail and popping at the head are O(1), and finding an
 * item's predecessor (insert in order, remove from the middle) walks from
 * the head. No allocation, no locking: the owner of the queue guards it
 * (the loop thread, or a mutex when it crosses threads). */
#ifndef CS_QUEUE_H
#define CS_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

/* The struct of type that holds member at ptr. */
#define CS_CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

struct cs_qlink {
    struct cs_qlink *next; /* NULL at the tail */
};

struct cs_queue {
    struct cs_qlink *head, *tail; /* both NULL while empty */
};

static inline void cs_queue_init(struct cs_queue *q)
{
    q->head = q->tail = NULL;
}

static inline bool cs_queue_is_empty(const struct cs_queue *q)
{
    return q->head == NULL;
}

/* Links link after prev, or at the head when prev is NULL. O(1). */
static inline void cs_queue_insert_after(struct cs_queue *q, struct cs_qlink *prev,
                                         struct cs_qlink *link)
{
    struct cs_qlink **at = prev != NULL ? &prev->next : &q->head;
    link->next = *at;
    *at = link;
    if (link->next == NULL)
        q->tail = link;
}

/* Appends link at the tail. O(1). */
static inline void cs_queue_push(struct cs_queue *q, struct cs_qlink *link)
{
    cs_queue_insert_after(q, q->tail, link);
}

/* Unlinks and returns the head, or NULL if the queue is empty. O(1). */
static inline struct cs_qlink *cs_queue_pop(struct cs_queue *q)
{
    struct cs_qlink *link = q->head;
    if (link == NULL)
        return NULL;
    q->head = link->next;
    if (q->head == NULL)
        q->tail = NULL;
    link->next = NULL;
    return link;
}

/* Unlinks link, which must be on q. O(position). */
static inline void cs_queue_remove(struct cs_queue *q, struct cs_qlink *link)
{
    struct cs_qlink *prev = NULL;
    struct cs_qlink **at = &q->head;
    while (*at != link) {
        prev = *at;
        at = &prev->next;
    }
    *at = link->next;
    if (q->tail == link)
        q->tail = prev;
    link->next = NULL;
}

#endif
