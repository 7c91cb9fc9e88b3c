/* One entry point per subcommand; each returns the process exit code (enum hm_exit). */
#ifndef HM_CLI_CMDS_H
#define HM_CLI_CMDS_H

#include <stdint.h>

int cmd_layout(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_whatif(int argc, char **argv);

/* --line-size arg: a power of two from min to max into *out; else one line on stderr
 * ("hitmap cmd: ...") and -1. */
int cli_line_size(const char *cmd, const char *arg, uint32_t min, uint32_t max, uint32_t *out);

#endif
