/* csched's config file: named contexts (a server with how to reach it: CA,
 * client certificate and key, a token file, a default output) and the
 * current one, like kubectl's kubeconfig. It lives at $CSCHED_CONFIG, else
 * $XDG_CONFIG_HOME/csched/config.yaml, else ~/.config/csched/config.yaml.
 *
 * It names a token file, never a token, so the file holds no secret; it is
 * still written with mode 0600, whole or not at all (a temporary file beside
 * it, fsync, rename), so that a crash or two writers never leave half of it.
 *
 * Single-threaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "cli.h"

/* The fields of a context: the YAML key and where it is kept. */
static const struct {
    const char *key;
    size_t offset;
} fields[] = {
    {"server", offsetof(struct cs_cli_context, server)},
    {"ca", offsetof(struct cs_cli_context, ca)},
    {"cert", offsetof(struct cs_cli_context, cert)},
    {"key", offsetof(struct cs_cli_context, key)},
    {"token-file", offsetof(struct cs_cli_context, token_file)},
    {"output", offsetof(struct cs_cli_context, output)},
};
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

char **cs_cli_context_field(struct cs_cli_context *ctx, const char *key)
{
    for (size_t i = 0; i < N_FIELDS; i++) {
        if (strcmp(fields[i].key, key) == 0)
            return (char **)((char *)ctx + fields[i].offset);
    }
    return NULL;
}

int cs_cli_config_path(char *buf, size_t len)
{
    const char *env = getenv("CSCHED_CONFIG"), *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    int n;

    if (env != NULL && env[0] != '\0')
        n = snprintf(buf, len, "%s", env);
    else if (xdg != NULL && xdg[0] == '/')
        n = snprintf(buf, len, "%s/csched/config.yaml", xdg);
    else if (home != NULL && home[0] != '\0')
        n = snprintf(buf, len, "%s/.config/csched/config.yaml", home);
    else
        return -ENOENT;
    return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

void cs_cli_config_free(struct cs_cli_config *cfg)
{
    for (size_t i = 0; i < cfg->n; i++) {
        free(cfg->contexts[i].name);
        for (size_t f = 0; f < N_FIELDS; f++)
            free(*cs_cli_context_field(&cfg->contexts[i], fields[f].key));
    }
    free(cfg->contexts);
    free(cfg->current);
    memset(cfg, 0, sizeof(*cfg));
}

struct cs_cli_context *cs_cli_config_find(struct cs_cli_config *cfg, const char *name)
{
    for (size_t i = 0; name != NULL && i < cfg->n; i++) {
        if (strcmp(cfg->contexts[i].name, name) == 0)
            return &cfg->contexts[i];
    }
    return NULL;
}

struct cs_cli_context *cs_cli_config_add(struct cs_cli_config *cfg, const char *name)
{
    struct cs_cli_context *ctx = cs_cli_config_find(cfg, name);

    if (ctx != NULL)
        return ctx;
    cfg->contexts = cs_cli_xrealloc(cfg->contexts, (cfg->n + 1) * sizeof(*cfg->contexts));
    ctx = &cfg->contexts[cfg->n++];
    memset(ctx, 0, sizeof(*ctx));
    ctx->name = cs_cli_xstrdup(name);
    return ctx;
}

/* A scalar node's text, or NULL for any other node. */
static const char *scalar(const yaml_node_t *node)
{
    return node != NULL && node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value
                                                          : NULL;
}

static int bad(const char *path, const yaml_node_t *node, const char *what, char *err,
               size_t errlen)
{
    snprintf(err, errlen, "%s:%zu: %s", path, node != NULL ? node->start_mark.line + 1 : 1, what);
    return -EINVAL;
}

/* One context's mapping into a new context of cfg. */
static int load_context(yaml_document_t *doc, const char *path, const char *name, yaml_node_t *node,
                        struct cs_cli_config *cfg, char *err, size_t errlen)
{
    struct cs_cli_context *ctx;

    if (node->type != YAML_MAPPING_NODE)
        return bad(path, node,
                   "a context is a mapping of server, ca, cert, key, token-file, output", err,
                   errlen);
    ctx = cs_cli_config_add(cfg, name);
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key),
                    *v = yaml_document_get_node(doc, p->value);
        char **field = scalar(k) != NULL ? cs_cli_context_field(ctx, scalar(k)) : NULL;

        if (field == NULL)
            return bad(path, k, "unknown key (known: server, ca, cert, key, token-file, output)",
                       err, errlen);
        if (scalar(v) == NULL)
            return bad(path, v, "a context's value is a string", err, errlen);
        free(*field);
        *field = cs_cli_xstrdup(scalar(v));
    }
    return 0;
}

static int load_document(yaml_document_t *doc, const char *path, struct cs_cli_config *cfg,
                         char *err, size_t errlen)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);

    if (root == NULL)
        return 0;
    if (root->type != YAML_MAPPING_NODE)
        return bad(path, root, "the file is a mapping of current-context and contexts", err,
                   errlen);
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key),
                    *v = yaml_document_get_node(doc, p->value);
        const char *key = scalar(k) != NULL ? scalar(k) : "";
        int rc;

        if (strcmp(key, "current-context") == 0 && scalar(v) != NULL) {
            free(cfg->current);
            cfg->current = cs_cli_xstrdup(scalar(v));
            continue;
        }
        if (strcmp(key, "contexts") != 0 || v->type != YAML_MAPPING_NODE)
            return bad(path, k, "expected current-context: NAME or contexts: {NAME: {...}}", err,
                       errlen);
        for (yaml_node_pair_t *c = v->data.mapping.pairs.start; c < v->data.mapping.pairs.top;
             c++) {
            yaml_node_t *name = yaml_document_get_node(doc, c->key);

            if (scalar(name) == NULL || scalar(name)[0] == '\0')
                return bad(path, name, "a context's name is a string", err, errlen);
            rc = load_context(doc, path, scalar(name), yaml_document_get_node(doc, c->value), cfg,
                              err, errlen);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

int cs_cli_config_load(const char *path, struct cs_cli_config *cfg, char *err, size_t errlen)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    FILE *f;
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    f = fopen(path, "re");
    if (f == NULL) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return rc;
    }
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(err, errlen, "%s:%zu: %s", path, parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "not YAML");
        rc = -EINVAL;
    } else {
        rc = load_document(&doc, path, cfg, err, errlen);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    if (rc != 0)
        cs_cli_config_free(cfg);
    return rc;
}

/* Writes s as a YAML double-quoted scalar (JSON's escapes are YAML's). */
static void quoted(FILE *f, const char *s)
{
    cs_json_write_string(f, s, strlen(s));
}

static void write_config(FILE *f, const struct cs_cli_config *cfg)
{
    fputs("# csched contexts: csched config set-context, use-context, get-contexts.\n", f);
    if (cfg->current != NULL) {
        fputs("current-context: ", f);
        quoted(f, cfg->current);
        fputc('\n', f);
    }
    fputs("contexts:\n", f);
    for (size_t i = 0; i < cfg->n; i++) {
        struct cs_cli_context *ctx = &cfg->contexts[i];

        fputs("  ", f);
        quoted(f, ctx->name);
        fputs(":\n", f);
        for (size_t k = 0; k < N_FIELDS; k++) {
            const char *v = *cs_cli_context_field(ctx, fields[k].key);

            if (v == NULL)
                continue;
            fprintf(f, "    %s: ", fields[k].key);
            quoted(f, v);
            fputc('\n', f);
        }
    }
}

/* Says "WHAT: strerror" in err and returns rc. */
static int io_error(char *err, size_t errlen, int rc, const char *what)
{
    snprintf(err, errlen, "%s: %s", what, strerror(-rc));
    return rc;
}

/* Makes dir and its missing parents, each new one 0700. */
static int make_dirs(char *dir)
{
    char *slash = strrchr(dir, '/');
    int rc = 0;

    if (mkdir(dir, 0700) == 0 || errno == EEXIST)
        return 0;
    if (errno != ENOENT || slash == NULL || slash == dir)
        return -errno;
    *slash = '\0';
    rc = make_dirs(dir);
    *slash = '/';
    if (rc == 0 && mkdir(dir, 0700) != 0 && errno != EEXIST)
        rc = -errno;
    return rc;
}

int cs_cli_config_save(const char *path, const struct cs_cli_config *cfg, char *err, size_t errlen)
{
    char tmp[4096], dir[4096];
    const char *slash = strrchr(path, '/');
    FILE *f = NULL;
    int fd, rc = 0;

    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
        return io_error(err, errlen, -ENAMETOOLONG, path);
    rc = dir[0] != '\0' ? make_dirs(dir) : 0;
    if (rc != 0)
        return io_error(err, errlen, rc, dir);
    /* mkstemp makes it 0600 and ours alone before a byte is written. */
    fd = mkstemp(tmp);
    if (fd < 0)
        return io_error(err, errlen, -errno, tmp);
    f = fdopen(fd, "w");
    if (f == NULL) {
        rc = -errno;
        close(fd);
        goto out_unlink;
    }
    write_config(f, cfg);
    if (fflush(f) != 0 || fsync(fd) != 0)
        rc = -errno;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc == 0)
        return 0;
out_unlink:
    (void)unlink(tmp); /* nothing more to do if even this fails */
    return io_error(err, errlen, rc, path);
}
