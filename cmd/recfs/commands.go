package main

import "github.com/spf13/cobra"

// extraCommands holds constructors of subcommands defined in other files of
// this package (mount, unmount, ...). Each file registers its commands from
// an init function, so the root command needs no list to keep in sync.
var extraCommands []func() *cobra.Command

// registerCommand adds a subcommand constructor to the root command.
func registerCommand(f func() *cobra.Command) { extraCommands = append(extraCommands, f) }
