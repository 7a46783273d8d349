package main

import (
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// Errors in the user's words: the rewrites below turn messages made by
// cobra into what a user can act on.

// negativeSelection matches cobra's error for "-5" given as an argument.
var negativeSelection = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^unknown shorthand flag: '\d' in -\d+$`)
})

// flagError is the root's flag error function: a usage error, and for a
// record selection written with a leading minus ("cat f -1"), a pointer to
// last:K.
func flagError(_ *cobra.Command, err error) error {
	if negativeSelection().MatchString(err.Error()) {
		return usagef("%v: records counted from the end are last:K (last:1 is the last record)", err)
	}
	return usageError{err}
}

// noCommand is the root's argument check: a word that is not a command is
// a usage error that suggests the commands it is close to.
func noCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), suggest(cmd, args[0]))
}

// suggest returns "; did you mean X?" for the commands of root close to
// word, or "".
func suggest(root *cobra.Command, word string) string {
	s := root.SuggestionsFor(word)
	if len(s) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(s, " or ") + "?"
}

// helperArity explains a mount-helper command line whose first word may
// be a misspelt command ("recfs mnt f.log MNT").
func helperArity(root *cobra.Command, args []string, err error) error {
	if len(args) == 0 || strings.Contains(args[0], "/") {
		return err
	}
	if s := suggest(root, args[0]); s != "" {
		return usagef("%q is not a command%s (%v)", args[0], s, err)
	}
	return err
}
