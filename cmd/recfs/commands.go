package main

import "github.com/spf13/cobra"

// command is a top-level subcommand: its name (the constructor's Use's
// first word) and its constructor.
type command struct {
	name  string
	build func() *cobra.Command
}

// commands are the top-level subcommands, in the order they are added.
var commands = []command{
	{"info", newInfoCmd}, {"ls", newLsCmd}, {"cat", newCatCmd},
	{"verify", newVerifyCmd}, {"index", newIndexCmd}, {"sample", newSampleCmd},
	{"append", newAppendCmd}, {"man", newManCmd}, {"mount", newMountCmd},
	{"serve", newServeCmd}, {"unmount", newUnmountCmd},
}

// commandsFor returns the top-level commands the command line args needs
// built. Building a command's flags is most of the start-up work of a
// short run, so a line that starts with a command's name gets that command
// alone (cobra descends into it and never looks at its siblings), and a
// bare --version gets none. Everything else (help, completion, man, a word
// that is no command, flags before the command) gets the whole tree, whose
// listings and suggestions need every command.
func commandsFor(args []string) []command {
	switch {
	case len(args) == 1 && args[0] == "--version":
		return nil
	case len(args) == 0 || args[0] == "man": // man pages walk the whole tree
		return commands
	}
	for _, c := range commands {
		if c.name == args[0] {
			return []command{c}
		}
	}
	return commands
}
