/* launch: the memory of a launch (launcher.h), freed from any thread: the
 * loop's, or a launch thread's for a launch ahead. */
#include <stdlib.h>

#include "env.h"
#include "launcher.h"
#include "secret.h"

void cs_launch_free(struct cs_launch *launch)
{
    if (launch->argv != NULL)
        for (char **p = launch->argv; *p != NULL; p++)
            free(*p);
    free(launch->argv);
    cs_env_free(launch->envp);
    cs_secrets_free(launch->secrets, launch->n_secrets);
    free(launch->dir);
    free(launch->ahead_dir);
    free(launch->run_as_user);
    free(launch->run_as_group);
    free(launch);
}
