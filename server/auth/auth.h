/* auth: who a TCP caller is. With --tls-cert the listener speaks TLS (and,
 * with --tls-client-ca, requires client certificates); a call is then known
 * by its bearer token ("token:NAME", from --tokens-file) or else by its
 * client certificate ("x509:SUBJECT", its role from --tls-client-roles). A
 * token, when sent, wins: a call that carries one is that token's, and a
 * wrong token is refused even over a good certificate. Without TLS there is
 * no TCP listener, or --insecure-tcp makes every TCP caller an admin (rpc).
 *
 * SIGHUP rereads every file on libuv's pool (auth_work.c); a file that fails
 * leaves the set in use as it was and is logged. New certificates reach gRPC
 * through tls_fetch, so connections already up stay up. Loop thread only,
 * except the work function. */
#ifndef CS_AUTH_H
#define CS_AUTH_H

#include <grpc/grpc_security.h>
#include <stdbool.h>
#include <uv.h>

#include "auth_file.h"
#include "identity.h"
#include "tls_fetch.h"
#include "util.h"

/* The files that secure the TCP listener, each NULL when not set; read by auth. */
struct cs_auth_paths {
    const char *tls_cert;      /* server certificate chain, PEM */
    const char *tls_key;       /* its private key, PEM */
    const char *tls_client_ca; /* CAs of client certificates: mTLS */
    const char *peer_ca;       /* CAs of the other replicas' certificates; NULL: the system's */
    const char *client_roles;  /* client certificate -> role */
    const char *tokens;        /* bearer tokens: name, role, SHA-256 */
};

struct cs_auth_load;

struct cs_auth {
    uv_loop_t *loop;
    struct cs_auth_paths paths; /* borrowed from the config */
    struct cs_tokens tokens;
    struct cs_cert_roles cert_roles;
    struct cs_tls_fetch fetch;      /* shared with gRPC's handshakes */
    grpc_channel_credentials *peer; /* the first load's, until taken */
    uv_signal_t sighup;
    struct cs_auth_load *loading; /* on the pool, or NULL */
    bool again;                   /* SIGHUP while loading: load once more */
    bool watching;                /* sighup is open */
    bool stopped;
    /* The gRPC peer of the HTTP API's connection ("fd:N"), or "". */
    char http_peer[24];
    /* Called on the loop after each SIGHUP's reload that installed the
     * files (the HTTP API rereads its certificate then); NULL: none. */
    void (*reloaded_cb)(void *arg);
    void *reloaded_arg;
};

/* Reads every file once (at start, before the loop runs: the server cannot
 * serve without them) and watches SIGHUP. paths is borrowed for auth's life.
 * 0, or -EINVAL / a negative errno with err saying which file and why. */
int cs_auth_start(struct cs_auth *auth, uv_loop_t *loop, const struct cs_auth_paths *paths,
                  struct cs_err *err);
/* The listener's credentials (NULL: plaintext); the caller releases them. */
grpc_server_credentials *cs_auth_server_credentials(struct cs_auth *auth);
/* The credentials to reach another replica with over TCP, as read at the
 * start (taken: a second call gets NULL): TLS trusting --peer-ca (else the
 * system's roots), presenting this replica's own certificate for a peer
 * that requires client certificates, when this one serves TLS; NULL
 * (plaintext) when it does not. */
grpc_channel_credentials *cs_auth_peer_credentials(struct cs_auth *auth);
/* The identity source (struct cs_identity_source, ctx: the struct cs_auth)
 * of TCP callers over TLS: by token, else by client certificate (its role
 * possibly none); and of the HTTP API's calls, by token (or its hash, for
 * a session) only. -EPERM when
 * the token is wrong or none is offered; -ENOENT for every other caller. */
int cs_auth_identify_cb(void *ctx, grpc_call *call, const char *peer,
                        const grpc_metadata_array *metadata, struct cs_identity *who,
                        struct cs_err *err);
/* The metadata by which a call of the HTTP API made under a browser's
 * session names its token: the token's SHA-256 in hex, as the tokens file
 * has it (the session keeps no token). Taken from the HTTP API's
 * connection only, which no other caller reaches. */
#define CS_AUTH_SESSION_KEY "csched-session-token-sha256"

/* Names the server end of the HTTP API's connection (server/http), whose
 * calls are known by their bearer token (or CS_AUTH_SESSION_KEY) alone,
 * TLS or not: the HTTP API has checked nothing itself. Main thread, before
 * the loop runs. */
void cs_auth_http_peer(struct cs_auth *auth, int fd);
/* Stops watching SIGHUP; a load on the pool finishes and is dropped. */
void cs_auth_stop(struct cs_auth *auth);
/* Frees the sets, once the loop has stopped and gRPC has no server left. */
void cs_auth_free(struct cs_auth *auth);

/* One load of every file, made on the loop and run on the pool. */
struct cs_auth_load {
    uv_work_t work; /* work.data: this load */
    struct cs_auth *auth;
    struct cs_auth_paths paths;
    int status; /* 0 or the negative errno of the first failure */
    struct cs_err err;
    struct cs_tokens tokens;
    struct cs_cert_roles cert_roles;
    grpc_ssl_server_certificate_config *tls; /* NULL without TLS */
    grpc_channel_credentials *peer;          /* to reach other replicas; NULL without TLS */
};

/* Pool thread (or the main thread before the loop runs): reads, checks and
 * parses work->data's files into its results. */
void cs_auth_load_work(uv_work_t *work);
/* Off the loop: the whole of path into *out (NUL-terminated, the caller
 * frees it); with private set, a file others may read is refused. 0 or a
 * negative errno, err saying which file and why. */
int cs_auth_read_file(const char *path, bool private, char **out, struct cs_err *err);

#endif
