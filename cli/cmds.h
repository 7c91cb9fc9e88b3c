/* One entry point per subcommand; each returns the process exit code (enum hm_exit). */
#ifndef HM_CLI_CMDS_H
#define HM_CLI_CMDS_H

int cmd_layout(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_whatif(int argc, char **argv);

#endif
