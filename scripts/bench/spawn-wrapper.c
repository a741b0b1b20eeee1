/* The floor for any launcher that must see its child's exit (agent's second net needs it):
 * spawn the CLI, wait, pass the status through — nothing else. scripts/bench-launch.sh
 * compiles it and runs it beside agent, so agent's own cost can be told from the cost of
 * being a second process at all. */
#include <spawn.h>
#include <sys/wait.h>
#include <stdlib.h>
extern char **environ;
int main(int argc, char **argv) {
    pid_t pid; int status;
    argv[0] = "claude";
    if (posix_spawnp(&pid, "claude", NULL, NULL, argv, environ) != 0) return 127;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
