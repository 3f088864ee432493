/* SPDX-License-Identifier: MIT */
/*
 * The commands cryptoctl.c dispatches to. Every command is
 * int cmd_x(struct cli *cli, int argc, char **argv) and returns the
 * process exit status (enum cli_exit). Its argv[0] is "cryptoctl: x" so
 * that getopt's own one-line diagnostics carry the command name.
 */
#ifndef CRYPTOCTL_COMMANDS_H
#define CRYPTOCTL_COMMANDS_H

#include "cli.h"

int cmd_stats(struct cli *cli, int argc, char **argv);
int cmd_engines(struct cli *cli, int argc, char **argv);
int cmd_encrypt(struct cli *cli, int argc, char **argv);
int cmd_decrypt(struct cli *cli, int argc, char **argv);
int cmd_digest(struct cli *cli, int argc, char **argv);
int cmd_mac(struct cli *cli, int argc, char **argv);
int cmd_clients(struct cli *cli, int argc, char **argv);
int cmd_sessions(struct cli *cli, int argc, char **argv);
int cmd_bench(struct cli *cli, int argc, char **argv);
int cmd_key(struct cli *cli, int argc, char **argv);
/* key pairs' ops (cmd_pkey.c) */
int cmd_sign(struct cli *cli, int argc, char **argv);
int cmd_verify(struct cli *cli, int argc, char **argv);
int cmd_derive(struct cli *cli, int argc, char **argv);

#endif /* CRYPTOCTL_COMMANDS_H */
