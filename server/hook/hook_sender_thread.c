/* hook_sender_thread: the HTTP side of hook deliveries, on a thread of its
 * own (see hook_sender.h). One curl multi handle; each post is one easy
 * handle, signed when it is made: X-Csched-Signature is
 * "sha256=" HMAC-SHA256(secret, timestamp "." body) in hex, with
 * X-Csched-Timestamp the Unix seconds it was made at. */
#define CS_LOG_COMPONENT "hooks"
#include <curl/curl.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hook_sender.h"
#include "log.h"
#include "secret_thread.h"
#include "util.h"

/* What the secret is called in the message of a reference that cannot be
 * read ("secret_env hook.secret (file:/...) could not be resolved: ..."). */
#define SECRET_NAME "hook.secret"
/* Wait in curl_multi_poll at most this long: a stop also wakes it. */
#define POLL_MS 1000

struct cs_hook_sender {
    pthread_t thread;
    pthread_mutex_t lock;
    struct cs_hook_post *head, *tail; /* submitted, not yet taken; guarded by lock */
    struct transfer *active;          /* the requests in the multi handle */
    bool stopping;                    /* guarded by lock */
    CURLM *multi;
    struct cs_mailbox *results;
    char *const *server_env;
    char *user_agent;
};

/* What an easy handle holds besides its post. */
struct transfer {
    struct transfer *prev, *next; /* in active */
    CURL *easy;
    struct cs_hook_post *post;
    struct curl_slist *headers;
    char curl_error[CURL_ERROR_SIZE];
};

static size_t discard_cb(char *ptr, size_t size, size_t n, void *arg)
{
    (void)ptr;
    (void)arg;
    return size * n;
}

/* The secret's value, read now (a file, or cschedd's environment at start),
 * into a malloc'd string the caller wipes: 0 or a negative errno with
 * post->error saying why. */
static int secret_read(struct cs_hook_sender *s, struct cs_hook_post *post, char **value)
{
    struct cs_secret ref = {
        .name = SECRET_NAME,
        .is_file = post->due.secret_file[0] != '\0',
        .ref = post->due.secret_file[0] != '\0' ? post->due.secret_file : post->due.secret_env,
    };
    char **env = cs_xcalloc(1, sizeof(*env));
    int rc = cs_secrets_resolve(&env, &ref, 1, s->server_env, post->error, sizeof(post->error));
    if (rc == 0) {
        *value = cs_xstrdup(env[0] + strlen(SECRET_NAME "="));
        explicit_bzero(env[0], strlen(env[0]));
        free(env[0]);
    }
    free(env);
    return rc;
}

/* The signature header of body at ts under the secret's value. */
static int sign(struct cs_hook_sender *s, struct cs_hook_post *post, long long ts, char *header,
                size_t cap)
{
    char *key = NULL;
    int rc = secret_read(s, post, &key);
    if (rc != 0)
        return rc;
    size_t body_len = strlen(post->due.body);
    char prefix[32];
    int prefix_len = snprintf(prefix, sizeof(prefix), "%lld.", ts);
    char *data = cs_xmalloc((size_t)prefix_len + body_len);
    memcpy(data, prefix, (size_t)prefix_len);
    memcpy(data + prefix_len, post->due.body, body_len);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (HMAC(EVP_sha256(), key, (int)strlen(key), (unsigned char *)data,
             (size_t)prefix_len + body_len, mac, &mac_len) == NULL) {
        (void)snprintf(post->error, sizeof(post->error), "HMAC-SHA256 failed");
        rc = -EIO;
    }
    explicit_bzero(key, strlen(key));
    free(key);
    free(data);
    if (rc != 0)
        return rc;
    size_t n = (size_t)snprintf(header, cap, "X-Csched-Signature: sha256=");
    for (unsigned int i = 0; i < mac_len && n + 2 < cap; i++)
        n += (size_t)snprintf(header + n, cap - n, "%02x", mac[i]);
    return 0;
}

static struct curl_slist *header_add(struct curl_slist *list, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static struct curl_slist *header_add(struct curl_slist *list, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    struct curl_slist *next = curl_slist_append(list, line);
    CS_ASSERT(next != NULL);
    return next;
}

/* Makes post's request and adds it to the multi handle: 0, or a negative
 * errno with post->error set (the post is then the caller's). */
static int transfer_start(struct cs_hook_sender *s, struct cs_hook_post *post)
{
    const struct cs_store_hook_due *d = &post->due;
    long long ts = (long long)time(NULL);
    char signature[128];
    int rc = sign(s, post, ts, signature, sizeof(signature));
    if (rc != 0)
        return rc;
    struct transfer *t = cs_xcalloc(1, sizeof(*t));
    t->post = post;
    t->headers = header_add(NULL, "Content-Type: application/json");
    t->headers = header_add(t->headers, "User-Agent: %s", s->user_agent);
    t->headers = header_add(t->headers, "X-Csched-Delivery: %lld", (long long)d->id);
    t->headers = header_add(t->headers, "X-Csched-Timestamp: %lld", ts);
    t->headers = header_add(t->headers, "%s", signature);
    /* No "Expect: 100-continue" round trip before a small body. */
    t->headers = header_add(t->headers, "Expect:");
    CURL *easy = curl_easy_init();
    CS_ASSERT(easy != NULL);
    CURLcode cc = CURLE_OK;
#define SET(opt, val)                                                                              \
    if (cc == CURLE_OK)                                                                            \
    cc = curl_easy_setopt(easy, opt, val)
    SET(CURLOPT_URL, d->url);
    SET(CURLOPT_PROTOCOLS_STR, "https,http");
    SET(CURLOPT_POSTFIELDS, d->body);
    SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(d->body));
    SET(CURLOPT_HTTPHEADER, t->headers);
    SET(CURLOPT_TIMEOUT_MS, (long)d->timeout_ms);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_WRITEFUNCTION, discard_cb);
    SET(CURLOPT_ERRORBUFFER, t->curl_error);
    SET(CURLOPT_PRIVATE, t);
    if (d->ca_file[0] != '\0')
        SET(CURLOPT_CAINFO, d->ca_file);
#undef SET
    if (cc == CURLE_OK && curl_multi_add_handle(s->multi, easy) == CURLM_OK) {
        t->easy = easy;
        t->next = s->active;
        if (s->active != NULL)
            s->active->prev = t;
        s->active = t;
        return 0;
    }
    (void)snprintf(post->error, sizeof(post->error), "setting up the request failed: %s",
                   curl_easy_strerror(cc));
    curl_easy_cleanup(easy);
    curl_slist_free_all(t->headers);
    free(t);
    return -EIO;
}

/* Takes t out of the multi handle and frees it, but for its post. */
static struct cs_hook_post *transfer_end(struct cs_hook_sender *s, struct transfer *t)
{
    struct cs_hook_post *post = t->post;
    if (t->prev != NULL)
        t->prev->next = t->next;
    else
        s->active = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    (void)curl_multi_remove_handle(s->multi, t->easy);
    curl_easy_cleanup(t->easy);
    curl_slist_free_all(t->headers);
    free(t);
    return post;
}

static void transfer_done(struct cs_hook_sender *s, CURL *easy, CURLcode result)
{
    struct transfer *t = NULL;
    CS_ASSERT(curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t) == CURLE_OK);
    struct cs_hook_post *post = t->post;
    long code = 0;
    (void)curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code); /* 0 stays on failure */
    post->response_code = code;
    if (result != CURLE_OK)
        (void)snprintf(post->error, sizeof(post->error), "%s",
                       t->curl_error[0] != '\0' ? t->curl_error : curl_easy_strerror(result));
    else if (code < 200 || code > 299)
        (void)snprintf(post->error, sizeof(post->error), "the endpoint answered HTTP %ld", code);
    cs_mailbox_post(s->results, &transfer_end(s, t)->mail);
}

/* Takes what was submitted: the posts, or NULL once stopping. */
static struct cs_hook_post *take(struct cs_hook_sender *s, bool *stopping)
{
    CS_ASSERT(pthread_mutex_lock(&s->lock) == 0);
    struct cs_hook_post *head = s->head;
    s->head = s->tail = NULL;
    *stopping = s->stopping;
    CS_ASSERT(pthread_mutex_unlock(&s->lock) == 0);
    return head;
}

static void drop_all(struct cs_hook_sender *s, struct cs_hook_post *posts)
{
    while (posts != NULL) {
        struct cs_hook_post *next = posts->next;
        cs_hook_post_free(posts);
        posts = next;
    }
    while (s->active != NULL)
        cs_hook_post_free(transfer_end(s, s->active));
}

static void *sender_main(void *arg)
{
    struct cs_hook_sender *s = arg;
    bool stopping = false;

    for (;;) {
        struct cs_hook_post *posts = take(s, &stopping);
        if (stopping) {
            drop_all(s, posts);
            break;
        }
        while (posts != NULL) {
            struct cs_hook_post *next = posts->next;
            if (transfer_start(s, posts) != 0)
                cs_mailbox_post(s->results, &posts->mail);
            posts = next;
        }
        int running = 0, left = 0;
        (void)curl_multi_perform(s->multi, &running);
        CURLMsg *msg;
        while ((msg = curl_multi_info_read(s->multi, &left)) != NULL)
            if (msg->msg == CURLMSG_DONE)
                transfer_done(s, msg->easy_handle, msg->data.result);
        (void)curl_multi_poll(s->multi, NULL, 0, POLL_MS, NULL);
    }
    return NULL;
}

int cs_hook_sender_start(struct cs_hook_sender **out, struct cs_mailbox *results,
                         char *const *server_env, const char *user_agent)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        cs_log_error("curl_global_init() failed: hook deliveries cannot be made");
        return -EIO;
    }
    struct cs_hook_sender *s = cs_xcalloc(1, sizeof(*s));
    s->results = results;
    s->server_env = server_env;
    s->user_agent = cs_xstrdup(user_agent);
    s->multi = curl_multi_init();
    CS_ASSERT(s->multi != NULL);
    CS_ASSERT(pthread_mutex_init(&s->lock, NULL) == 0);
    int rc = pthread_create(&s->thread, NULL, sender_main, s);
    if (rc != 0) {
        cs_log_error("pthread_create(hook sender) failed: %s", strerror(rc));
        curl_multi_cleanup(s->multi);
        free(s->user_agent);
        free(s);
        return -rc;
    }
    *out = s;
    return 0;
}

void cs_hook_sender_submit(struct cs_hook_sender *s, struct cs_hook_post *post)
{
    post->next = NULL;
    CS_ASSERT(pthread_mutex_lock(&s->lock) == 0);
    if (s->tail != NULL)
        s->tail->next = post;
    else
        s->head = post;
    s->tail = post;
    CS_ASSERT(pthread_mutex_unlock(&s->lock) == 0);
    (void)curl_multi_wakeup(s->multi);
}

void cs_hook_sender_stop(struct cs_hook_sender *s)
{
    if (s == NULL)
        return;
    CS_ASSERT(pthread_mutex_lock(&s->lock) == 0);
    s->stopping = true;
    CS_ASSERT(pthread_mutex_unlock(&s->lock) == 0);
    (void)curl_multi_wakeup(s->multi);
    CS_ASSERT(pthread_join(s->thread, NULL) == 0);
    curl_multi_cleanup(s->multi);
    CS_ASSERT(pthread_mutex_destroy(&s->lock) == 0);
    free(s->user_agent);
    free(s);
    /* The only user of libcurl, and its thread is gone: what curl_global_init
     * set up goes too, so a clean stop leaves LeakSanitizer silent. */
    curl_global_cleanup();
}

void cs_hook_post_free(struct cs_hook_post *post)
{
    cs_store_hook_due_clear(&post->due);
    if (post->launch != NULL)
        cs_launch_free(post->launch);
    free(post);
}
